import Carousel
import Definitions
import Store
import TestSupport
import Testing
import TimeZones

@testable import PostgresStore

/// Scheduled changes on every store: kept with their request, listed by time, cancelled, and
/// claimed by the one write that makes each (a second one finds it gone and writes nothing).
@Suite("Store pending changes")
struct PendingStoreTests {
    static let alice = Requester(actor: "alice", requestID: "req-9")

    static func change(_ carousel: Int64, at seconds: Int64, body: String = #"{"interval": 9}"#) -> PendingChange {
        PendingChange(
            carousel: carousel, at: t0 + .seconds(seconds), method: "PATCH", path: "/carousels/lobby", body: body,
            ifMatch: "\"x-1-1-definition\"", requester: alice, createdAt: t0)
    }

    /// A write of `stored`, one revision on, making pending change `id`.
    static func applying(_ id: Int64, to stored: StoredCarousel) -> CarouselWrite {
        var changed = stored
        changed.revision += 1
        return CarouselWrite(
            changed,
            audit: [
                AuditEntry(.patchCarousel, by: alice, at: t0 + .seconds(60), carousel: stored.name, revision: 2)
            ], applying: id)
    }

    @Test(arguments: StoreKind.allCases)
    func aChangeIsKeptListedByTimeAndCancelled(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let lobby = try store.create(lobby, anchor: playing, by: byTests)
        let later = try store.schedule(Self.change(lobby.serial, at: 120))
        let sooner = try store.schedule(Self.change(lobby.serial, at: 60, body: #"{"autoplay": true}"#))
        #expect(sooner.id > later.id)
        #expect(try store.pendingChanges() == [sooner, later])
        #expect(sooner == Self.change(lobby.serial, at: 60, body: #"{"autoplay": true}"#).stored(as: sooner.id))

        let cancelling = Attribution(actor: "bob", at: t0 + .seconds(5))
        #expect(try !store.cancelPending(later.id, of: lobby.serial + 1, by: cancelling), "another carousel's")
        #expect(try store.cancelPending(later.id, of: lobby.serial, by: cancelling))
        #expect(try !store.cancelPending(later.id, of: lobby.serial, by: cancelling), "no longer pending")
        #expect(try store.pendingChanges() == [sooner])
        #expect(
            try store.auditLog(AuditQuery()).prefix(3).map(\.entry) == [
                AuditEntry(.cancelChange, cancelling, carousel: "lobby", target: String(later.id)),
                AuditEntry(.scheduleChange, by: Self.alice, at: t0, carousel: "lobby", target: String(sooner.id)),
                AuditEntry(.scheduleChange, by: Self.alice, at: t0, carousel: "lobby", target: String(later.id)),
            ])

        #expect(throws: StoreError.notFound(name: "#999")) { try store.schedule(Self.change(999, at: 60)) }
        try store.delete(lobby.key, expectedRevision: 1, by: byTests)
        #expect(try store.pendingChanges().isEmpty, "a carousel's pending changes go with it")
    }

    @Test(arguments: StoreKind.allCases)
    func theWriteMakingAChangeClaimsItAndASecondFindsItGone(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let lobby = try store.create(lobby, anchor: playing, by: byTests)
        var hall = lobby.definition
        hall.name = "hall"
        let other = try store.create(hall, anchor: playing, by: byTests)
        let pending = try store.schedule(Self.change(lobby.serial, at: 60))
        let elsewhere = try store.schedule(Self.change(other.serial, at: 60))

        #expect(throws: StoreError.notPending(id: elsewhere.id), "another carousel's change") {
            try store.modify(lobby.key, .admin(byTests), expecting: lobby) { Self.applying(elsewhere.id, to: $0) }
        }
        let made = try store.modify(lobby.key, .admin(byTests), expecting: lobby) { Self.applying(pending.id, to: $0) }
        #expect(made.revision == 2)
        #expect(try store.pendingChanges() == [elsewhere])
        #expect(throws: StoreError.notPending(id: pending.id), "made once") {
            try store.modify(lobby.key, .admin(byTests), expecting: made) { Self.applying(pending.id, to: $0) }
        }
        #expect(try store.load(named: "lobby") == made, "the second write wrote nothing")
        #expect(try store.auditLog(AuditQuery(carousel: "lobby")).first?.entry.action == .patchCarousel)
        #expect(try store.auditLog(AuditQuery(carousel: "lobby")).count == 3, "created, scheduled, made")
    }

    /// Two replicas both knowing a change: the first claims it, the second's write finds it gone.
    @Test func onPostgreSQLAChangeIsMadeByOneReplicaOnly() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let (first, second) = try await offThePool { (try PostgresStore(uri: uri), try PostgresStore(uri: uri)) }
        defer {
            first.close()
            second.close()
        }
        let lobby = try first.create(lobby, anchor: playing, by: byTests)
        let pending = try first.schedule(Self.change(lobby.serial, at: 60))
        #expect(try second.pendingChanges() == [pending])
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for store in [first, second] {
                group.addTask {
                    try await offThePool {
                        do {
                            _ = try store.modify(lobby.key, .admin(byTests), expecting: lobby) {
                                Self.applying(pending.id, to: $0)
                            }
                            return true
                        } catch StoreError.notPending {
                            return false
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(outcomes.filter { $0 }.count == 1 && outcomes.count == 2, "one made it, the other found it gone")
        #expect(try first.load(named: "lobby")?.revision == 2)
        #expect(try first.pendingChanges().isEmpty)
    }
}
