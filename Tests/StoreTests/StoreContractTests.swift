import Carousel
import Definitions
import Store
import TestSupport
import Testing
import TimeZones

@testable import PostgresStore
@testable import SQLiteStore

/// The same contract, checked against every store this build has (docs/STORE.md).
enum StoreKind: String, CaseIterable, CustomTestStringConvertible {
    case memory, sqlite, postgres

    /// Every store; in the unit tier those that start no server (docs/TESTING.md).
    static var allCases: [StoreKind] { TestTier.isUnit ? [.memory, .sqlite] : [.memory, .sqlite, .postgres] }

    var testDescription: String { rawValue }

    /// A fresh store; opening one waits on the disk or the server, off the pool (`offThePool`).
    func make() async throws -> any CarouselStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite:
            try await offThePool {
                try SQLiteStore(path: temporaryDirectory().appendingPathComponent("carousel.db").path)
            }
        case .postgres:
            try await offThePool { [uri = try await PostgresServer.shared().createDatabase()] in
                try PostgresStore(uri: uri)
            }
        }
    }
}

let t0 = Timestamp(secondsSinceEpoch: 1_795_982_400)
/// Whom the tests' admin changes are attributed to.
let byTests = Attribution(actor: "tests", at: t0)
let lobby = CarouselDefinition(
    name: "lobby", interval: .milliseconds(2500), autoplay: false,
    timeZone: try! ZoneDirectory.system.rules(named: "Europe/Berlin"), fallback: "b",
    banners: [
        Banner(
            id: "a", image: "https://cdn.example.com/a.png", caption: "Spring \"sale\"",
            link: "https://shop.example.com/",
            schedule: Schedule(
                startsAt: t0, endsAt: t0 + .seconds(86_400),
                windows: [Window(from: TimeOfDay("22:00")!, to: TimeOfDay("06:30")!)])),
        Banner(
            id: "b", image: "https://cdn.example.com/b.png", duration: .seconds(10), audiences: ["de", "store-berlin"]),
    ])
/// With a turn of a weighted cycle (docs/WEIGHTS.md) and two audiences' own anchors
/// (docs/AUDIENCES.md), kept as given.
let playing = CarouselAnchor(
    index: 1, playback: .playing(since: t0), version: 7, changedAt: t0, turn: 3,
    audiences: [
        "store-berlin": CarouselAnchor(
            index: 0, playback: .playing(since: t0 + .seconds(2)), version: 12, changedAt: t0 + .seconds(2), turn: 5),
        "de": CarouselAnchor(index: nil, playback: .paused(until: nil), version: 3, changedAt: t0),
    ])
/// With a takeover by a banner of its own, which the store keeps whole.
let paused = CarouselAnchor(
    index: 0, playback: .paused(until: t0 + .seconds(30)), version: 8,
    takeover: Carousel.Takeover(
        banner: Banner(id: "alert", image: "https://cdn.example.com/alert.png", caption: "Fire drill at 3"),
        until: t0 + .seconds(600), frozenAt: t0 + .seconds(5)),
    changedAt: t0 + .seconds(7))

@Suite("Store contract")
struct StoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func aCreatedCarouselIsLoadedAsItWasGiven(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        #expect(created.revision == 1)
        #expect(try store.loadAll() == [created])
        #expect(created.definition == lobby && created.anchor == playing)
    }

    @Test(arguments: StoreKind.allCases)
    func aNameIsTakenOnce(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        _ = try store.create(lobby, anchor: playing, by: byTests)
        #expect(throws: StoreError.duplicate(name: "lobby")) { try store.create(lobby, anchor: paused, by: byTests) }
        #expect(try store.loadAll().map(\.anchor) == [playing])
    }

    @Test(arguments: StoreKind.allCases)
    func aChangeIsDecidedOnWhatIsStoredAndStoresWhatItReturns(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        var edited = lobby
        edited.banners.removeLast()
        var seen: [StoredCarousel] = []
        let written = try store.modify(created.key, .admin(byTests)) { stored in
            seen.append(stored)
            return StoredCarousel(definition: edited, revision: 2, anchor: paused, serial: stored.serial).unaudited
        }
        #expect(seen == [created])
        #expect(written.definition == edited && written.anchor == paused && written.revision == 2)
        #expect(try store.loadAll() == [written])
        #expect(try store.load(named: "lobby") == written)
    }

    /// A caller whose idea of the row is out of date (another process changed it) still gets a
    /// change decided on the row as stored.
    @Test(arguments: StoreKind.allCases)
    func aChangeExpectingAnOldRowIsDecidedOnTheStoredOne(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        let moved = { (stored: StoredCarousel) -> CarouselWrite? in
            var next = stored
            next.anchor.version += 1
            next.anchor.index = (next.anchor.index ?? 0) + 1
            return next.unaudited
        }
        let second = try store.modify(created.key, .command, expecting: created, moved)
        #expect(second.anchor.version == playing.version + 1, "expected the row as it was: decided on it")
        let third = try store.modify(created.key, .command, expecting: created, moved)
        #expect(third.anchor.version == playing.version + 2, "an old expectation: decided on the row as stored")
        #expect(try store.load(named: "lobby") == third)
    }

    @Test(arguments: StoreKind.allCases)
    func aChangeThatDecidesNothingStoresNothing(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        #expect(try store.modify(created.key, .command) { _ in nil } == created)
        #expect(try store.loadAll() == [created])
    }

    @Test(arguments: StoreKind.allCases)
    func anchorsOfCommandsAreSavedAndLoaded(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let key = try store.create(lobby, anchor: playing, by: byTests).key
        try store.saveAnchor(paused, of: key)
        let stored = try #require(try store.loadAll().first)
        #expect(stored.anchor == paused && stored.revision == 1)
        let unknown = CarouselKey(name: "hall", serial: 99)
        #expect(throws: StoreError.notFound(name: "hall")) { try store.saveAnchor(paused, of: unknown) }
        #expect(try store.load(named: "hall") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aDeleteBasedOnAnOldRevisionChangesNothing(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        _ = try store.modify(created.key, .admin(byTests)) { stored in
            var next = stored
            next.revision += 1
            return next.unaudited
        }
        #expect(throws: StoreError.conflict(name: "lobby", revision: 2)) {
            try store.delete(created.key, expectedRevision: 1, by: byTests)
        }
        #expect(try store.loadAll().map(\.revision) == [2])
    }

    @Test(arguments: StoreKind.allCases)
    func aDeletedCarouselComesBackAsAnotherOne(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let first = try store.create(lobby, anchor: playing, by: byTests)
        try store.delete(first.key, expectedRevision: 1, by: byTests)
        #expect(try store.loadAll().isEmpty)
        #expect(throws: StoreError.notFound(name: "lobby")) {
            try store.delete(first.key, expectedRevision: 1, by: byTests)
        }
        let second = try store.create(lobby, anchor: playing, by: byTests)
        #expect(second.serial != first.serial, "caches must not mistake one for the other")
        #expect(throws: StoreError.notFound(name: "lobby"), "a change meant for the first never lands on the second") {
            try store.saveAnchor(paused, of: first.key)
        }
        #expect(try store.loadAll().first?.anchor == playing)
    }

    @Test(arguments: StoreKind.allCases)
    func anImportReplacesWhatItNamesAndCreatesTheRest(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        _ = try store.create(lobby, anchor: playing, by: byTests)
        var edited = lobby
        edited.interval = .seconds(9)
        let hall = CarouselDefinition(name: "hall")
        try store.importDefinitions(
            [edited, hall],
            anchor: { definition, existing in
                existing.map {
                    CarouselAnchor(
                        index: 0, playback: $0.anchor.playback, version: $0.anchor.version + 1, changedAt: t0)
                } ?? CarouselAnchor(index: nil, playback: .playing(since: t0), version: 1, changedAt: t0)
            }, by: byTests)
        let stored = try store.loadAll()
        #expect(stored.map(\.name) == ["hall", "lobby"])
        #expect(stored[1].definition == edited && stored[1].revision == 2 && stored[1].anchor.version == 8)
        #expect(stored[0].revision == 1)
    }

    /// Proof of play (docs/STATS.md): a play reported again keeps its longest report, by
    /// whichever process; views and clicks add up; a span selects what was shown in it.
    @Test(arguments: StoreKind.allCases)
    func playsAreKeptOnceAndViewsAndClicksAddUp(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let first = PlayRecord(carousel: 3, banner: "a", startedAt: t0, shown: .seconds(4))
        let second = PlayRecord(carousel: 3, banner: "b", startedAt: t0 + .seconds(10), shown: .seconds(2))
        let quarter = EngagementCount.quarter(of: t0)
        try store.record(
            StatsBatch(
                plays: [first, second],
                engagement: [EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 2, clicks: 1)]))
        // Another process's report of the same plays: the first seen for less long, the second longer.
        var longer = second
        longer.shown = .seconds(7)
        var shorter = first
        shorter.shown = .seconds(1)
        try store.record(
            StatsBatch(
                plays: [shorter, longer],
                engagement: [
                    EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 3, clicks: 0),
                    EngagementCount(carousel: 4, banner: "a", quarter: quarter, views: 9, clicks: 9),
                ]))
        let all = try store.stats(of: 3, audience: nil, from: t0 + .seconds(-3600), to: t0 + .seconds(3600))
        #expect(all.plays == [first, longer])
        #expect(all.engagement == [EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 5, clicks: 1)])
        // A span after the first play ended and before the second began: nothing shown in it.
        let between = try store.stats(of: 3, audience: nil, from: t0 + .seconds(5), to: t0 + .seconds(10))
        #expect(between.plays.isEmpty)
        #expect(try store.stats(of: 3, audience: nil, from: t0 + .seconds(4), to: t0 + .seconds(10)).plays == [first])
        // Quarters that start in the span: the one holding t0 starts before t0 + 1 s.
        #expect(
            try store.stats(of: 3, audience: nil, from: t0 + .seconds(1), to: t0 + .seconds(3600)).engagement.isEmpty)
        #expect(try store.lastPlay(of: 3, audience: nil) == longer)
        #expect(try store.lastPlay(of: 5, audience: nil) == nil)
    }

    /// Each audience's screens have their own plays, views and clicks (docs/AUDIENCES.md): a play
    /// of de starting with one of the screens of no audience is another play; counts add up per
    /// audience; a view with an id counts in its audience.
    @Test(arguments: StoreKind.allCases)
    func playsAndCountsAreKeptPerAudience(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let quarter = EngagementCount.quarter(of: t0)
        let everyone = PlayRecord(carousel: 3, banner: "a", startedAt: t0, shown: .seconds(4))
        let de = PlayRecord(carousel: 3, audience: "de", banner: "b", startedAt: t0, shown: .seconds(2))
        let deLater = PlayRecord(
            carousel: 3, audience: "de", banner: "a", startedAt: t0 + .seconds(2), shown: .seconds(2))
        try store.record(
            StatsBatch(
                plays: [everyone, de, deLater],
                engagement: [
                    EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 1, clicks: 0),
                    EngagementCount(carousel: 3, audience: "de", banner: "a", quarter: quarter, views: 2, clicks: 1),
                ],
                identifiedViews: [
                    IdentifiedView(
                        carousel: 3, id: "v-1", audience: "de", banner: "a", quarter: quarter, reportedAt: t0)
                ]))
        try store.record(
            StatsBatch(engagement: [
                EngagementCount(carousel: 3, audience: "de", banner: "a", quarter: quarter, views: 1, clicks: 0)
            ]))
        let span = (from: t0 - .seconds(3600), to: t0 + .seconds(3600))
        let ofDe = try store.stats(of: 3, audience: "de", from: span.from, to: span.to)
        #expect(ofDe.plays == [de, deLater])
        #expect(
            ofDe.engagement == [
                EngagementCount(carousel: 3, audience: "de", banner: "a", quarter: quarter, views: 4, clicks: 1)
            ])
        let ofNone = try store.stats(of: 3, audience: nil, from: span.from, to: span.to)
        #expect(ofNone.plays == [everyone])
        #expect(ofNone.engagement == [EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 1, clicks: 0)])
        #expect(
            try store.stats(of: 3, audience: "fr", from: span.from, to: span.to)
                == StatsRecords(plays: [], engagement: []))
        #expect(try store.lastPlay(of: 3, audience: "de") == deLater)
        #expect(try store.lastPlay(of: 3, audience: nil) == everyone)
    }

    /// A view reported with an id counts once, however often and by whichever process it is
    /// handed over (a screen retrying a flush whose answer it lost), while the id is kept; the
    /// same id in another carousel is another view; ids reported before the cutoff are forgotten.
    @Test(arguments: StoreKind.allCases)
    func aViewWithAnIDCountsOnceWhileItsIDIsKept(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let quarter = EngagementCount.quarter(of: t0)
        func view(_ id: String, carousel: Int64 = 3, banner: String = "a", reportedAt: Timestamp = t0) -> IdentifiedView
        {
            IdentifiedView(carousel: carousel, id: id, banner: banner, quarter: quarter, reportedAt: reportedAt)
        }
        func views(of carousel: Int64) throws -> [EngagementCount] {
            try store.stats(of: carousel, audience: nil, from: t0 - .seconds(3600), to: t0 + .seconds(3600)).engagement
        }
        try store.record(
            StatsBatch(
                engagement: [EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 2, clicks: 0)],
                identifiedViews: [view("v-1"), view("v-2", banner: "b")]))
        try store.record(
            StatsBatch(identifiedViews: [
                view("v-1", reportedAt: t0 + .seconds(60)), view("v-3"), view("v-1", carousel: 4),
            ]))
        #expect(
            try views(of: 3) == [
                EngagementCount(carousel: 3, banner: "a", quarter: quarter, views: 4, clicks: 0),
                EngagementCount(carousel: 3, banner: "b", quarter: quarter, views: 1, clicks: 0),
            ])
        #expect(try views(of: 4) == [EngagementCount(carousel: 4, banner: "a", quarter: quarter, views: 1, clicks: 0)])
        // 48 hours on, the ids reported at t0 are forgotten (a repeat of v-1 counts again); v-4,
        // reported since, is still known.
        let later = t0 + IdentifiedView.reportRetention
        try store.record(
            StatsBatch(identifiedViews: [view("v-4", reportedAt: later)], forgetReportsBefore: t0 + .seconds(1)))
        try store.record(StatsBatch(identifiedViews: [view("v-1"), view("v-4")]))
        #expect(try views(of: 3).first?.views == 6)
    }
}

extension CarouselStore {
    /// A command's write: the anchor replaced, whatever is stored.
    func saveAnchor(_ anchor: CarouselAnchor, of key: CarouselKey) throws(StoreError) {
        _ = try modify(key, .command) { stored in
            var changed = stored
            changed.anchor = anchor
            return changed.unaudited
        }
    }
}

extension StoredCarousel {
    /// A write of this carousel that appends nothing to the audit log: for the tests of other rules.
    var unaudited: CarouselWrite { CarouselWrite(self, audit: []) }
}

@Suite("SQLite store")
struct SQLiteStoreTests {
    @Test func everythingSurvivesClosingAndOpeningTheFile() throws {
        let path = try temporaryDirectory().appendingPathComponent("nested/folder/carousel.db").path
        var store: SQLiteStore? = try SQLiteStore(path: path)
        let key = try store!.create(lobby, anchor: playing, by: byTests).key
        try store!.saveAnchor(paused, of: key)
        let identity = store!.identity
        store = nil
        let reopened = try SQLiteStore(path: path)
        #expect(reopened.identity == identity)
        let stored = try #require(try reopened.loadAll().first)
        #expect(stored.definition == lobby && stored.anchor == paused)
    }

    /// Schema version 0 is a SQLite file banner-server never wrote to (made by `sqlite3`, or left
    /// empty by a start that failed): it is migrated to the current version and used.
    @Test func aFileOfAnEarlierSchemaIsMigrated() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        try SQLiteConnection(path: path).execute("PRAGMA journal_mode = WAL")
        let store = try SQLiteStore(path: path)
        #expect(try store.loadAll().isEmpty)
        _ = try store.create(lobby, anchor: playing, by: byTests)
        let version = try SQLiteConnection(path: path).statement("PRAGMA user_version")
        #expect(try version.step() && version.integer(0) == Int64(SQLiteStore.schemaVersion))
    }

    @Test func aStoreWithANewerSchemaIsRefusedNamingBothVersions() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        try SQLiteConnection(path: path).execute("PRAGMA user_version = 99")
        #expect(
            throws: StoreError.unusable(
                "\(path) has schema version 99, newer than this banner-server's \(SQLiteStore.schemaVersion): "
                    + "run a banner-server at least as new as the one that wrote it, or give another --store")
        ) { try SQLiteStore(path: path) }
    }

    @Test func aFileThatIsNotADatabaseIsRefused() throws {
        let file = try temporaryFile(named: "carousel.db", contents: String(repeating: "not a database\n", count: 200))
        #expect {
            try SQLiteStore(path: file.path)
        } throws: { error in
            guard case .unusable(let detail) = error as? StoreError else { return false }
            return detail.hasPrefix("\(file.path) is not a usable SQLite store")
        }
    }

    @Test func aWriteWhileAnotherConnectionHoldsTheLockIsReportedUnavailable() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        let store = try SQLiteStore(path: path, busyTimeout: .milliseconds(100))
        let key = try store.create(lobby, anchor: playing, by: byTests).key
        let intruder = try SQLiteConnection(path: path)
        try intruder.execute("PRAGMA busy_timeout = 0; BEGIN IMMEDIATE")
        let started = ContinuousClock.now
        #expect {
            try store.saveAnchor(paused, of: key)
        } throws: { error in
            guard case .unavailable(let detail) = error as? StoreError else { return false }
            return detail.contains("stayed locked by another connection for 0.1 s")
        }
        #expect(ContinuousClock.now - started >= .milliseconds(100), "it waited the whole timeout for the lock")
        try intruder.execute("ROLLBACK")
        #expect(try store.loadAll().first?.anchor == playing)
    }
}

/// Stores written by the banner-server before schedules (schema 1: no `changed_at`, no
/// `takeover`) keep their carousels when a newer one opens them, as a user upgrading would.
@Suite("Stores of schema 1")
struct SchemaOneTests {
    /// What a schema-1 banner-server stored for one carousel: a definition without `timeZone` or
    /// `fallback`, on banner 1, playing since t0, version 7, revision 3.
    static let definitionText =
        #"{"name":"lobby","interval":2.5,"autoplay":false,"banners":[{"id":"a","image":"https://cdn.example.com/a.png","caption":"","link":null,"duration":null},{"id":"b","image":"https://cdn.example.com/b.png","caption":"","link":null,"duration":10.0}]}"#
    static let row =
        "INSERT INTO carousels (name, definition, revision, position, playing_since, paused_until, version) "
        + "VALUES ('lobby', '\(definitionText)', 3, 1, \(t0.nanosecondsSinceEpoch), NULL, 7);"

    static func checkMigrated(_ store: any CarouselStore) throws {
        let stored = try #require(try store.loadAll().first)
        #expect(stored.revision == 3)
        #expect(stored.definition.timeZone == .utc && stored.definition.fallback == nil)
        #expect(stored.definition.banners.map(\.id) == ["a", "b"])
        #expect(
            stored.anchor
                == CarouselAnchor(
                    index: 1, playback: .playing(since: t0), version: 7, changedAt: Timestamp(nanosecondsSinceEpoch: 0))
        )
        var carousel = stored.definition.carousel(at: stored.anchor)
        carousel.advance(to: t0 + .seconds(11))
        #expect(carousel.currentBanner?.id == "a", "b's 10 s ran out at t0 + 10 s")
        #expect(carousel.version == 8)
        // History began with the upgrade: the definition as stored is its current revision.
        let history = try store.revisions(of: stored.serial)
        #expect(history.map(\.revision) == [3])
        #expect(history.map(\.actor) == ["unrecorded"])
        #expect(history.map(\.summary) == ["as stored when history began"])
        #expect(history.allSatisfy { $0.at > Timestamp.now() - .seconds(600) && $0.at <= Timestamp.now() })
        #expect(try store.revision(3, of: stored.serial)?.definition == stored.definition)
    }

    @Test func aSQLiteFileOfSchemaOneIsMigratedKeepingItsCarousels() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        try SQLiteConnection(path: path).execute(
            """
            CREATE TABLE store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE carousels (
                serial INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE, definition TEXT NOT NULL,
                revision INTEGER NOT NULL, position INTEGER, playing_since INTEGER, paused_until INTEGER,
                version INTEGER NOT NULL);
            INSERT INTO store (key, value) VALUES ('identity', 'schema-one');
            \(Self.row)
            PRAGMA user_version = 1;
            """)
        let store = try SQLiteStore(path: path)
        #expect(store.identity == "schema-one")
        try Self.checkMigrated(store)
        #expect(
            try MigrationTests.sqliteSteps(path) == SQLiteStore.migrations.map(\.name), "its step by name, then ours")
    }

    @Test func aPostgreSQLDatabaseOfSchemaOneIsMigratedKeepingItsCarousels() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let database = PostgresServer.database(in: uri)
        _ = try await server.psql(
            """
            CREATE TABLE banner_store (key text PRIMARY KEY, value text NOT NULL);
            CREATE TABLE carousels (
                serial bigserial PRIMARY KEY, name text NOT NULL UNIQUE, definition text NOT NULL,
                revision bigint NOT NULL, position bigint, playing_since bigint, paused_until bigint,
                version bigint NOT NULL);
            INSERT INTO banner_store (key, value) VALUES ('identity', 'schema-one'), ('schema_version', '1');
            \(Self.row)
            """, database: database)
        let store = try PostgresStore(uri: uri)
        defer { store.close() }
        #expect(store.identity == "schema-one")
        try Self.checkMigrated(store)
    }
}

/// A PostgreSQL store opened while its server is down (docs/STORE.md): no error, and why it is
/// not usable yet is known at once, before its listener has tried for itself (`/readyz` says it).
@Suite("PostgreSQL store before its server is up")
struct PostgresUnreachableTests {
    @Test func aStoreOpenedWhileNothingListensSaysWhyAtOnce() throws {
        let port = try freeLoopbackPort()  // freed again: nothing listens there
        let store = try PostgresStore(uri: "postgres://banner@127.0.0.1:\(port)/carousels")
        defer { store.close() }
        let reason = try #require(store.unreachable)
        #expect(reason.contains("127.0.0.1:\(port)/carousels cannot be reached"), "\(reason)")
        #expect(reason.contains("Connection refused"), "\(reason)")
        #expect {
            try store.loadAll()
        } throws: { error in
            guard case .unavailable(let detail) = error as? StoreError else { return false }
            return detail == reason
        }
    }
}
