import Carousel
import Definitions
import Store
import TestSupport
import Testing
import TimeZones

/// A carousel's history (docs/HISTORY.md), on every store: each definition change kept, by whom
/// and when, in the change's own transaction; commands kept out of it; pruning by count and age.
@Suite("Store revisions")
struct RevisionStoreTests {
    /// `stored` with `definition`, one revision on, by `attribution`.
    private static func revise(
        _ store: any CarouselStore, _ key: CarouselKey, to definition: CarouselDefinition, by attribution: Attribution
    ) throws -> StoredCarousel {
        try store.modify(key, .admin(attribution)) { stored in
            StoredCarousel(
                definition: definition, revision: stored.revision + 1, anchor: stored.anchor, serial: stored.serial
            ).unaudited
        }
    }

    @Test(arguments: StoreKind.allCases)
    func everyDefinitionChangeIsKeptWithWhoAndWhen(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: Attribution(actor: "env:admin", at: t0))
        var slower = lobby
        slower.interval = .seconds(9)
        slower.banners.removeFirst()
        let later = t0 + .seconds(60)
        _ = try Self.revise(store, created.key, to: slower, by: Attribution(actor: "loopback", at: later))
        // A command moves the anchor, not the revision: nothing for the history.
        _ = try store.modify(created.key, .command) { stored in
            var moved = stored
            moved.anchor.version += 1
            return moved.unaudited
        }

        #expect(
            try store.revisions(of: created.serial) == [
                RevisionRecord(
                    revision: 2, at: later, actor: "loopback", summary: "interval 2.5 s → 9.0 s; banner 'a' removed"),
                RevisionRecord(revision: 1, at: t0, actor: "env:admin", summary: "created with 2 banners"),
            ])
        #expect(try store.revision(1, of: created.serial)?.definition == lobby)
        #expect(try store.revision(2, of: created.serial)?.definition == slower)
        #expect(try store.revision(2, of: created.serial)?.record.actor == "loopback")
        #expect(try store.revision(3, of: created.serial) == nil)
        #expect(try store.revision(1, of: created.serial + 1) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func aRestoreSaysWhichRevisionItBroughtBack(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let created = try store.create(lobby, anchor: playing, by: byTests)
        var edited = lobby
        edited.fallback = nil
        _ = try Self.revise(store, created.key, to: edited, by: byTests)
        let restoring = Attribution(actor: "loopback", at: t0 + .seconds(5), restoring: 1)
        let restored = try Self.revise(store, created.key, to: lobby, by: restoring)

        #expect(restored.revision == 3 && restored.definition == lobby)
        #expect(
            try store.revisions(of: created.serial).map(\.summary) == [
                "restored revision 1: fallback none → 'b'", "fallback 'b' → none", "created with 2 banners",
            ])
    }

    @Test(arguments: StoreKind.allCases)
    func seedingAndImportingAreKeptToo(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        #expect(try store.seed([lobby], anchor: { _ in playing }, by: Attribution(actor: "seed", at: t0)))
        var edited = lobby
        edited.autoplay = true
        try store.importDefinitions(
            [edited], anchor: { _, existing in existing?.anchor ?? playing },
            by: Attribution(actor: "import", at: t0 + .seconds(1)))
        let serial = try #require(try store.load(named: "lobby")).serial

        let history = try store.revisions(of: serial)
        #expect(history.map(\.actor) == ["import", "seed"])
        #expect(history.map(\.summary) == ["autoplay on", "created with 2 banners"])
        #expect(try store.revision(2, of: serial)?.definition == edited)
    }

    /// A carousel deleted takes its history along; one created again under its name starts anew.
    @Test(arguments: StoreKind.allCases)
    func aDeletedCarouselsHistoryGoesWithIt(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let first = try store.create(lobby, anchor: playing, by: byTests)
        _ = try Self.revise(store, first.key, to: lobby, by: byTests)
        try store.delete(first.key, expectedRevision: 2, by: byTests)
        let second = try store.create(lobby, anchor: playing, by: byTests)

        #expect(try store.revisions(of: first.serial).isEmpty)
        #expect(try store.revisions(of: second.serial).map(\.revision) == [1])
    }

    /// Kept: the last 1,000 revisions or those of the last 90 days, whichever is more. Revision 1
    /// is older than 90 days: gone once it is not among the last 1,000. Revision 2 is recent: kept
    /// when it is not among them either.
    @Test(arguments: StoreKind.allCases)
    func historyKeepsTheLastThousandOrNinetyDaysWhicheverIsMore(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let old = t0 - .seconds(100 * 86_400)
        let created = try store.create(lobby, anchor: playing, by: Attribution(actor: "tests", at: old))
        let recent = t0 - .seconds(86_400)
        // A thousand synced writes: on a thread of their own, not one every other test needs.
        try await offThePool {
            for _ in 2...1001 {
                _ = try Self.revise(store, created.key, to: lobby, by: Attribution(actor: "tests", at: recent))
            }
        }
        let thousand = try store.revisions(of: created.serial).map(\.revision)
        #expect(thousand.count == 1000 && thousand.last == 2, "revision 1 went when 1,001 was made")
        _ = try Self.revise(store, created.key, to: lobby, by: Attribution(actor: "tests", at: t0))

        let kept = try store.revisions(of: created.serial).map(\.revision)
        #expect(kept.count == 1001)
        #expect(kept.first == 1002 && kept.last == 2)
        #expect(try store.revision(1, of: created.serial) == nil)
    }
}
