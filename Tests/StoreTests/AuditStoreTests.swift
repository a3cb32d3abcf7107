import Carousel
import Definitions
import Store
import TestSupport
import Testing
import TimeZones

@testable import PostgresStore
@testable import SQLiteStore

/// The audit log on every store (docs/AUDIT.md): each write appends its entries in its own
/// transaction, a write that changes nothing appends none, and the log is read newest first by
/// time, carousel, actor and page.
@Suite("Store audit log")
struct AuditStoreTests {
    static let alice = Requester(actor: "alice", requestID: "req-1")
    static let ci = Requester(actor: "ci", requestID: "req-2")
    static let imageID = String(repeating: "c", count: 64)

    static func by(_ requester: Requester, at seconds: Int64) -> Attribution {
        Attribution(by: requester, at: t0 + .seconds(seconds))
    }

    static func image(_ id: String = imageID) -> NewMedia {
        NewMedia(
            id: id, type: "image/png", width: 10, height: 10, original: [1, 2, 3], variants: [], createdAt: t0)
    }

    static func token(_ name: String) -> TokenRecord {
        TokenRecord(
            name: name, role: .control, carousels: nil, expiresAt: nil, createdAt: t0, createdBy: "alice",
            digest: String(repeating: name.first.map { String($0) } ?? "0", count: 64))
    }

    /// `stored` one revision on, with an entry for `action` by `requester`.
    static func revised(_ stored: StoredCarousel, _ action: AuditAction, by requester: Requester, at seconds: Int64)
        -> CarouselWrite
    {
        var changed = stored
        changed.revision += 1
        return CarouselWrite(
            changed,
            audit: [
                AuditEntry(
                    action, by: requester, at: t0 + .seconds(seconds), carousel: stored.name,
                    revision: changed.revision)
            ])
    }

    @Test(arguments: StoreKind.allCases)
    func everyWriteAppendsItsEntriesNewestFirst(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 1))
        _ = try store.modify(created.key, .admin(Self.by(Self.alice, at: 2))) {
            Self.revised($0, .patchCarousel, by: Self.alice, at: 2)
        }
        // Two commands in one write (group commit), tried first on what the caller expects.
        let known = try #require(try store.load(named: "lobby"))
        let moved = try store.modify(created.key, .command, expecting: known) { stored in
            var changed = stored
            changed.anchor.version += 2
            return CarouselWrite(
                changed,
                audit: [
                    AuditEntry(.next, by: Self.ci, at: t0 + .seconds(3), carousel: "lobby", target: "b", revision: 2),
                    AuditEntry(
                        .pause, by: Requester(actor: "anonymous", requestID: "req-3"), at: t0 + .seconds(3),
                        carousel: "lobby", target: "b", revision: 2),
                ])
        }
        #expect(try store.saveMedia(Self.image(), by: Self.by(Self.alice, at: 4)))
        #expect(try store.deleteMedia(Self.imageID, by: Self.by(Self.alice, at: 5)) == .deleted)
        #expect(try store.saveToken(Self.token("kiosk"), by: Self.by(Self.alice, at: 6)))
        #expect(try store.deleteToken(named: "kiosk", by: Self.by(Self.alice, at: 7)))
        try store.delete(moved.key, expectedRevision: 2, by: Self.by(Self.alice, at: 8))

        let log = try store.auditLog(AuditQuery())
        #expect(
            log.map(\.entry) == [
                AuditEntry(.deleteCarousel, Self.by(Self.alice, at: 8), carousel: "lobby", revision: 2),
                AuditEntry(.revokeToken, Self.by(Self.alice, at: 7), target: "kiosk"),
                AuditEntry(.createToken, Self.by(Self.alice, at: 6), target: "kiosk"),
                AuditEntry(.deleteMedia, Self.by(Self.alice, at: 5), target: Self.imageID),
                AuditEntry(.uploadMedia, Self.by(Self.alice, at: 4), target: Self.imageID),
                AuditEntry(
                    .pause, by: Requester(actor: "anonymous", requestID: "req-3"), at: t0 + .seconds(3),
                    carousel: "lobby", target: "b", revision: 2),
                AuditEntry(.next, by: Self.ci, at: t0 + .seconds(3), carousel: "lobby", target: "b", revision: 2),
                AuditEntry(.patchCarousel, Self.by(Self.alice, at: 2), carousel: "lobby", revision: 2),
                AuditEntry(.createCarousel, Self.by(Self.alice, at: 1), carousel: "lobby", revision: 1),
            ])
        let numbers = log.map(\.seq)
        #expect(numbers == numbers.sorted(by: >) && Set(numbers).count == numbers.count)
    }

    @Test(arguments: StoreKind.allCases)
    func aWriteThatChangesNothingAppendsNothing(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 1))
        #expect(throws: StoreError.duplicate(name: "lobby")) {
            try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 2))
        }
        _ = try store.modify(created.key, .command) { _ in nil }
        var showingAbsent = lobby
        showingAbsent.banners[0].image = "/media/\(String(repeating: "d", count: 64))"
        #expect(throws: StoreError.missingMedia([String(repeating: "d", count: 64)])) {
            try store.modify(created.key, .admin(Self.by(Self.alice, at: 3))) { stored in
                var changed = Self.revised(stored, .replaceCarousel, by: Self.alice, at: 3)
                changed.carousel.definition = showingAbsent
                return changed
            }
        }
        #expect(throws: StoreError.conflict(name: "lobby", revision: 1)) {
            try store.delete(created.key, expectedRevision: 7, by: Self.by(Self.alice, at: 4))
        }
        #expect(try store.deleteMedia(Self.imageID, by: Self.by(Self.alice, at: 5)) == .notFound)
        #expect(try store.saveMedia(Self.image(), by: Self.by(Self.alice, at: 6)))
        #expect(try !store.saveMedia(Self.image(), by: Self.by(Self.alice, at: 7)), "the same image again")
        #expect(try store.saveToken(Self.token("kiosk"), by: Self.by(Self.alice, at: 8)))
        #expect(try !store.saveToken(Self.token("kiosk"), by: Self.by(Self.alice, at: 9)), "the name is taken")
        #expect(try !store.deleteToken(named: "nobody", by: Self.by(Self.alice, at: 10)))

        #expect(
            try store.auditLog(AuditQuery()).map(\.entry.action) == [.createToken, .uploadMedia, .createCarousel])
    }

    /// A deleted carousel's entries stay: the log is append-only.
    @Test(arguments: StoreKind.allCases)
    func theLogIsReadByTimeCarouselActorAndPage(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        var hall = lobby
        hall.name = "hall"
        let lobbyKey = try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 10)).key
        let hallKey = try store.create(hall, anchor: playing, by: Self.by(Self.ci, at: 20)).key
        _ = try store.modify(lobbyKey, .admin(Self.by(Self.ci, at: 30))) {
            Self.revised($0, .patchCarousel, by: Self.ci, at: 30)
        }
        try store.delete(hallKey, expectedRevision: 1, by: Self.by(Self.alice, at: 40))
        let all = try store.auditLog(AuditQuery())
        #expect(all.map(\.entry.at) == [40, 30, 20, 10].map { t0 + .seconds($0) })

        func read(_ query: AuditQuery) throws -> [Int64] {
            try store.auditLog(query).map { ($0.entry.at - t0).components.seconds }
        }
        #expect(try read(AuditQuery(from: t0 + .seconds(20), to: t0 + .seconds(40))) == [30, 20])
        #expect(try read(AuditQuery(carousel: "hall")) == [40, 20])
        #expect(try read(AuditQuery(actor: "ci")) == [30, 20])
        #expect(try read(AuditQuery(carousel: "lobby", actor: "alice")) == [10])
        #expect(try read(AuditQuery(limit: 3)) == [40, 30, 20])
        #expect(try read(AuditQuery(before: all[2].seq, limit: 3)) == [10])
        #expect(try read(AuditQuery(carousel: "nowhere")).isEmpty)
    }

    @Test(arguments: StoreKind.allCases)
    func seedingAndImportAreAuditedAsTheirs(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let seed = Attribution(actor: "seed", at: t0)
        #expect(try store.seed([lobby], anchor: { _ in playing }, by: seed))
        var hall = lobby
        hall.name = "hall"
        let imported = Attribution(actor: "import", at: t0 + .seconds(1))
        try store.importDefinitions([lobby, hall], anchor: { _, _ in playing }, by: imported)
        #expect(
            try store.auditLog(AuditQuery()).map(\.entry) == [
                AuditEntry(.importCarousel, imported, carousel: "hall", revision: 1),
                AuditEntry(.importCarousel, imported, carousel: "lobby", revision: 2),
                AuditEntry(.seedCarousel, seed, carousel: "lobby", revision: 1),
            ])
    }

    /// No write without its entry: when the entry cannot be appended (here the table refuses every
    /// row), the write fails as a whole and the carousel is as it was.
    @Test func onSQLiteAWriteWhoseEntryFailsIsNotMade() async throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        let store = try await offThePool { try SQLiteStore(path: path) }
        let created = try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 1))
        try SQLiteConnection(path: path).execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'audit refused'); END")
        try Self.checkWritesFailWithoutTheirEntry(store, created)
    }

    @Test func onPostgreSQLAWriteWhoseEntryFailsIsNotMade() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let store = try await offThePool { try PostgresStore(uri: uri) }
        defer { store.close() }
        let created = try store.create(lobby, anchor: playing, by: Self.by(Self.alice, at: 1))
        _ = try await server.psql(
            "ALTER TABLE audit ADD CONSTRAINT refuse CHECK (false) NOT VALID",
            database: PostgresServer.database(in: uri))
        try Self.checkWritesFailWithoutTheirEntry(store, created)
    }

    private static func checkWritesFailWithoutTheirEntry(_ store: any CarouselStore, _ created: StoredCarousel) throws {
        // A command tried on what is expected (PostgreSQL's one statement), then an admin change.
        #expect(throws: StoreError.self) {
            try store.modify(created.key, .command, expecting: created) { stored in
                var changed = stored
                changed.anchor.version += 1
                return CarouselWrite(
                    changed, audit: [AuditEntry(.next, by: alice, at: t0 + .seconds(2), carousel: "lobby")])
            }
        }
        #expect(throws: StoreError.self) {
            try store.modify(created.key, .admin(by(alice, at: 3))) { revised($0, .patchCarousel, by: alice, at: 3) }
        }
        #expect(throws: StoreError.self) { try store.saveToken(token("kiosk"), by: by(alice, at: 4)) }
        #expect(throws: StoreError.self) { try store.saveMedia(image(), by: by(alice, at: 5)) }
        #expect(throws: StoreError.self) { try store.delete(created.key, expectedRevision: 1, by: by(alice, at: 6)) }
        #expect(try store.loadAll() == [created])
        #expect(try store.tokens().isEmpty)
        #expect(try store.mediaRecords().isEmpty)
        #expect(try store.revisions(of: created.serial).map(\.revision) == [1])
        #expect(try store.auditLog(AuditQuery()).map(\.entry.action) == [.createCarousel])
    }
}
