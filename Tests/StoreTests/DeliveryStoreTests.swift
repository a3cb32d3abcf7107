import Carousel
import Definitions
import Foundation
import JSON
import Store
import TestSupport
import Testing
import TimeZones

@testable import PostgresStore

/// Webhook deliveries on every store (docs/WEBHOOKS.md): queued in the transaction of the write
/// that causes them, one per webhook that asked for the event; claimed, retried, delivered or
/// given up, listed, forgotten; claimed by one process at a time.
@Suite("Store webhook deliveries")
struct DeliveryStoreTests {
    static let alice = Requester(actor: "alice", requestID: "req-1")

    static func at(_ seconds: Int64) -> Timestamp { t0 + .seconds(seconds) }

    static func hook(_ store: any CarouselStore, _ url: String, _ events: [WebhookEvent]) throws -> WebhookRecord {
        try #require(
            try store.saveWebhook(
                WebhookRecord(url: url, events: events, secret: "0123456789abcdef", createdAt: t0, createdBy: "alice"),
                by: byTests, keepingAtMost: 100))
    }

    /// The JSON body of a delivery as a dictionary.
    static func body(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// Everything claimable at `now`, claimed until a minute later.
    static func claimAll(_ store: any CarouselStore, at now: Timestamp) throws -> [DueDelivery] {
        try store.claimDeliveries(dueAt: now, until: now + .seconds(60), limit: 100)
    }

    @Test(arguments: StoreKind.allCases)
    func writesQueueTheirEventsForTheWebhooksThatAskedForThem(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let changes = try Self.hook(store, "https://chat.example.com/a", [.carouselChanged, .takeoverStarted])
        let launches = try Self.hook(store, "https://cdn.example.com/b", [.carouselPublished])
        let created = try store.create(lobby, anchor: playing, by: Attribution(by: Self.alice, at: Self.at(1)))
        let patched = try store.modify(created.key, .admin(Attribution(by: Self.alice, at: Self.at(2)))) {
            AuditStoreTests.revised($0, .patchBanner, by: Self.alice, at: 2)
        }
        let pending = try store.schedule(
            PendingChange(
                carousel: created.serial, at: Self.at(10), method: "PATCH", path: "/carousels/lobby", body: "{}",
                ifMatch: nil, requester: Self.alice, createdAt: Self.at(3)))
        let published = try store.modify(patched.key, .admin(Attribution(by: Self.alice, at: Self.at(10)))) {
            var write = AuditStoreTests.revised($0, .patchCarousel, by: Self.alice, at: 10)
            write.applying = pending.id
            return write
        }
        // Commands: a takeover is told, a move is not.
        let command = Requester(actor: "kiosk")
        _ = try store.modify(published.key, .command) { stored in
            CarouselWrite(
                stored,
                audit: [
                    AuditEntry(.next, by: command, at: Self.at(11), carousel: "lobby", target: "b", revision: 3),
                    AuditEntry(
                        .startTakeover, by: command, at: Self.at(12), carousel: "lobby", target: "b", revision: 3),
                ])
        }
        #expect(try store.saveToken(AuditStoreTests.token("kiosk"), by: byTests), "not an event")
        try store.delete(published.key, expectedRevision: 3, by: Attribution(by: Self.alice, at: Self.at(13)))

        let told = try store.deliveries(of: changes.id, limit: 100)
        #expect(
            told.map(\.type) == ["carousel.changed", "takeover.started", "carousel.changed", "carousel.changed"],
            "newest first: the deletion, the takeover, the patch, the creation")
        #expect(told.allSatisfy { $0.state == .pending && $0.attempts == 0 && $0.lastAttempt == nil })
        #expect(told.map(\.createdAt) == [Self.at(13), Self.at(12), Self.at(2), Self.at(1)])
        #expect(try store.deliveries(of: launches.id, limit: 100).map(\.type) == ["carousel.published"])

        let due = try Self.claimAll(store, at: Self.at(20))
        #expect(due.count == 5)
        let takeover = try #require(due.first { $0.type == "takeover.started" })
        #expect(takeover.url == "https://chat.example.com/a" && takeover.secret == "0123456789abcdef")
        let body = try Self.body(takeover.body)
        #expect(body["id"] as? String == takeover.event && body["type"] as? String == "takeover.started")
        #expect(body["at"] as? String == Self.at(12).rfc3339)
        let data = try #require(body["data"] as? [String: Any])
        #expect(data["carousel"] as? String == "lobby" && data["action"] as? String == "takeover.start")
        #expect(
            data["target"] as? String == "b" && data["revision"] as? Int == 3 && data["actor"] as? String == "kiosk")
        #expect(data["applied"] == nil)
        let launch = try Self.body(try #require(due.first { $0.type == "carousel.published" }).body)
        let launched = try #require(launch["data"] as? [String: Any])
        #expect(launched["applied"] as? Bool == true && launched["requestId"] as? String == "req-1")
        #expect(Set(due.map(\.event)).count == 5, "each event its own id")
    }

    @Test(arguments: StoreKind.allCases)
    func aDeliveryIsClaimedRetriedAndDeliveredOrGivenUp(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let webhook = try Self.hook(store, "https://chat.example.com/a", [.screenOffline])
        let other = try Self.hook(store, "https://chat.example.com/b", [.screenOnline])
        let offline = QueuedEvent(type: .screenOffline, at: Self.at(1), data: JSONObjectFixture.screen)
        try store.queue([offline])
        try store.queue([offline])
        #expect(try store.deliveries(of: webhook.id, limit: 10).count == 1, "an event queued twice is one delivery")
        #expect(try store.deliveries(of: other.id, limit: 10).isEmpty, "not asked for")
        #expect(try store.nextDeliveryDue() == Self.at(1))

        #expect(try Self.claimAll(store, at: Self.at(0)).isEmpty, "not due yet")
        let first = try #require(try Self.claimAll(store, at: Self.at(2)).first)
        #expect(first.attempts == 0 && first.event == offline.id && first.body == offline.body)
        #expect(try Self.claimAll(store, at: Self.at(3)).isEmpty, "claimed")
        #expect(try store.nextDeliveryDue() == Self.at(62), "when the claim runs out")

        try store.finishDelivery(
            first.number, DeliveryAttempt(at: Self.at(4), status: 500, error: nil), retryAt: Self.at(5))
        var listed = try #require(try store.deliveries(of: webhook.id, limit: 10).first)
        #expect(listed.state == .pending && listed.attempts == 1 && listed.nextAttemptAt == Self.at(5))
        #expect(listed.lastAttempt == DeliveryAttempt(at: Self.at(4), status: 500, error: nil))
        #expect(try store.nextDeliveryDue() == Self.at(5))
        #expect(try Self.claimAll(store, at: Self.at(4)).isEmpty, "released, not due again before its time")

        let second = try #require(try Self.claimAll(store, at: Self.at(5)).first)
        #expect(second.number == first.number && second.attempts == 1)
        try store.finishDelivery(
            second.number, DeliveryAttempt(at: Self.at(6), status: 204, error: nil), retryAt: Self.at(99))
        listed = try #require(try store.deliveries(of: webhook.id, limit: 10).first)
        #expect(listed.state == .delivered && listed.deliveredAt == Self.at(6) && listed.nextAttemptAt == nil)
        #expect(listed.attempts == 2)
        // Each attempt listed, oldest first, with its status or its error.
        #expect(
            listed.attemptLog == [
                DeliveryAttempt(at: Self.at(4), status: 500, error: nil),
                DeliveryAttempt(at: Self.at(6), status: 204, error: nil),
            ])
        #expect(try store.nextDeliveryDue() == nil)

        // Given up: retried no more, listed as failed with why.
        let later = QueuedEvent(type: .screenOffline, at: Self.at(10), data: JSONObjectFixture.screen)
        try store.queue([later])
        let third = try #require(try Self.claimAll(store, at: Self.at(10)).first)
        try store.finishDelivery(
            third.number, DeliveryAttempt(at: Self.at(11), status: nil, error: "connection refused"), retryAt: nil)
        let failed = try #require(try store.deliveries(of: webhook.id, limit: 10).first)
        #expect(failed.state == .failed && failed.lastAttempt?.error == "connection refused")
        #expect(failed.attemptLog == [DeliveryAttempt(at: Self.at(11), status: nil, error: "connection refused")])
        #expect(try store.deliveries(of: webhook.id, limit: 1).count == 1, "the limit")

        #expect(try store.forgetDeliveries(doneBefore: Self.at(7)) == 1, "the delivered one, done at 6")
        #expect(try store.deliveries(of: webhook.id, limit: 10).map(\.event) == [later.id])
        // A deleted webhook's deliveries go with it.
        try store.queue([QueuedEvent(type: .screenOffline, at: Self.at(20), data: JSONObjectFixture.screen)])
        #expect(try store.nextDeliveryDue() == Self.at(20))
        #expect(try store.deleteWebhook(webhook.id, by: byTests))
        #expect(try store.nextDeliveryDue() == nil)
        #expect(try store.deliveries(of: webhook.id, limit: 10).isEmpty)
    }

    /// Two replicas claiming at once: every delivery is claimed by exactly one.
    @Test func onPostgreSQLEachDeliveryIsClaimedByOneReplica() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let (first, second) = try await offThePool { (try PostgresStore(uri: uri), try PostgresStore(uri: uri)) }
        defer {
            first.close()
            second.close()
        }
        let webhook = try Self.hook(first, "https://chat.example.com/a", [.screenOffline])
        try first.queue(
            (0..<60).map { QueuedEvent(type: .screenOffline, at: Self.at($0), data: JSONObjectFixture.screen) })
        let claimed = try await withThrowingTaskGroup(of: [Int64].self) { group in
            for store in [first, second] {
                group.addTask {
                    try await offThePool {
                        var numbers: [Int64] = []
                        while true {
                            let due = try store.claimDeliveries(dueAt: Self.at(100), until: Self.at(200), limit: 7)
                            if due.isEmpty { return numbers }
                            numbers += due.map(\.number)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let all = claimed.flatMap { $0 }
        #expect(all.count == 60 && Set(all).count == 60, "each once")
        #expect(Set(all) == Set(try first.deliveries(of: webhook.id, limit: 100).map(\.number)))
    }

    /// Which audited writes are told, and as what (a pure mapping: every store queues by it).
    @Test func eachAuditedWriteIsToldAsItsEvent() throws {
        let alice = Self.alice
        func told(_ action: AuditAction, published: Bool = false) -> [QueuedEvent] {
            QueuedEvent.told(
                by: [
                    AuditEntry(
                        action, by: alice, at: Self.at(1), carousel: "lobby", target: "3: If-Match no longer holds")
                ],
                published: published)
        }
        #expect(told(.patchBanner).map(\.type) == [.carouselChanged])
        #expect(told(.restoreRevision).map(\.type) == [.carouselChanged])
        #expect(told(.deleteCarousel).map(\.type) == [.carouselChanged])
        #expect(told(.patchCarousel, published: true).map(\.type) == [.carouselPublished])
        #expect(told(.startTakeover).map(\.type) == [.takeoverStarted])
        #expect(told(.endTakeover).map(\.type) == [.takeoverEnded])
        for action in [AuditAction.next, .pause, .uploadMedia, .createToken, .scheduleChange, .seedCarousel] {
            #expect(told(action).isEmpty, "\(action.rawValue) is not an event")
        }
        // A scheduled change dropped says so: published, not applied.
        let skipped = try #require(told(.skipChange).first)
        #expect(skipped.type == .carouselPublished)
        let data = try #require(try Self.body(skipped.body)["data"] as? [String: Any])
        #expect(data["applied"] as? Bool == false && data["target"] as? String == "3: If-Match no longer holds")
        let published = try #require(told(.patchCarousel, published: true).first)
        let made = try #require(try Self.body(published.body)["data"] as? [String: Any])
        #expect(made["applied"] as? Bool == true)
    }

    @Test func retriesDoubleFromOneSecondToTenMinutesForADay() {
        let created = Self.at(0)
        var now = created
        var waits: [Int64] = []
        var attempts = 0
        while true {
            attempts += 1
            guard let next = DeliveryRetry.next(afterFailed: attempts, createdAt: created, now: now) else { break }
            waits.append((next - now).nanoseconds / 1_000_000_000)
            now = next
        }
        #expect(Array(waits.prefix(11)) == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600])
        #expect(waits.dropFirst(10).allSatisfy { $0 == 600 })
        #expect(now - created <= .seconds(86_400) && now - created > .seconds(86_400 - 600))
        #expect(attempts == waits.count + 1)
    }
}

/// The data of a screen event, as the fleet would give it.
enum JSONObjectFixture {
    static var screen: JSONObject {
        var data = JSONObject()
        data.add("id", "lobby-1")
        data.add("carousel", "lobby")
        data.add("state", "offline")
        return data
    }
}
