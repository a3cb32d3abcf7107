import PostgresStore
import Store
import TestSupport
import Testing
import TimeZones

/// Webhooks on every store (docs/WEBHOOKS.md): kept with their secret (deliveries are signed with
/// it), listed by id, deleted; each creation and deletion in the audit log, never the secret.
@Suite("Store webhooks")
struct WebhookStoreTests {
    static func webhook(_ url: String, _ events: [WebhookEvent]) -> WebhookRecord {
        WebhookRecord(url: url, events: events, secret: "s3cret-\(url.count)", createdAt: t0, createdBy: "alice")
    }

    @Test(arguments: StoreKind.allCases)
    func aWebhookIsKeptListedAndDeletedWithItsAuditEntries(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let chat = try #require(
            try store.saveWebhook(
                Self.webhook("https://chat.example.com/hook", [.takeoverEnded, .carouselChanged]), by: byTests,
                keepingAtMost: 100))
        let cdn = try #require(
            try store.saveWebhook(
                Self.webhook("https://cdn.example.com/purge", [.carouselPublished]), by: byTests, keepingAtMost: 100))
        #expect(cdn.id > chat.id && chat.id > 0)
        #expect(chat.events == [.carouselChanged, .takeoverEnded], "kept in the order the events are listed")
        #expect(try store.webhooks() == [chat, cdn])
        #expect(try store.webhooks().first?.secret == "s3cret-29", "the secret kept as given: deliveries are signed")

        let deleting = Attribution(actor: "bob", at: t0 + .seconds(5))
        #expect(try store.deleteWebhook(chat.id, by: deleting))
        #expect(try !store.deleteWebhook(chat.id, by: deleting), "no longer there")
        #expect(try store.webhooks() == [cdn])
        let log = try store.auditLog(AuditQuery()).prefix(3).map(\.entry)
        #expect(
            log == [
                AuditEntry(.deleteWebhook, deleting, target: "\(chat.id) https://chat.example.com/hook"),
                AuditEntry(.createWebhook, byTests, target: "\(cdn.id) https://cdn.example.com/purge"),
                AuditEntry(.createWebhook, byTests, target: "\(chat.id) https://chat.example.com/hook"),
            ])
        #expect(!log.contains { $0.target?.contains("s3cret") == true }, "never the secret")
    }

    /// The most webhooks kept is counted in the write's transaction: one past it stores nothing
    /// and audits nothing; a deletion makes room again.
    @Test(arguments: StoreKind.allCases)
    func noWebhookIsKeptPastTheLimit(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        for number in 0..<3 {
            let saved = try store.saveWebhook(
                Self.webhook("https://hooks.example.com/\(number)", [.carouselChanged]), by: byTests, keepingAtMost: 2)
            #expect((saved == nil) == (number == 2), "webhook \(number)")
        }
        #expect(try store.webhooks().map(\.url) == ["https://hooks.example.com/0", "https://hooks.example.com/1"])
        #expect(try store.auditLog(AuditQuery()).count == 2, "the refused one is not in the log")
        #expect(try store.deleteWebhook(store.webhooks()[0].id, by: byTests))
        #expect(
            try store.saveWebhook(
                Self.webhook("https://hooks.example.com/3", [.carouselChanged]), by: byTests, keepingAtMost: 2) != nil)
    }

    /// Two replicas creating webhooks at once (docs/WEBHOOKS.md): together they never keep more
    /// than the limit (stop 45 found a count read before the write let them pass it).
    @Test func replicasRacingNeverPassTheLimit() async throws {
        let uri = try await PostgresServer.shared().createDatabase()
        let replicas = try await offThePool { [try PostgresStore(uri: uri), try PostgresStore(uri: uri)] }
        defer { for replica in replicas { replica.close() } }
        let created = try await withThrowingTaskGroup(of: Bool.self) { group in
            for number in 0..<24 {
                group.addTask {
                    try await offThePool {
                        try replicas[number % 2].saveWebhook(
                            Self.webhook("https://hooks.example.com/\(number)", [.carouselChanged]), by: byTests,
                            keepingAtMost: 10) != nil
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(created == 10)
        #expect(try replicas[0].webhooks().count == 10)
    }

    @Test func eventsThisBuildDoesNotKnowAreLeftOutWhenRead() {
        #expect(
            WebhookRecord.events(stored: "screen.offline carousel.exploded carousel.changed") == [
                .screenOffline, .carouselChanged,
            ])
    }
}
