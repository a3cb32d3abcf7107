import Store
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
        let chat = try store.saveWebhook(
            Self.webhook("https://chat.example.com/hook", [.takeoverEnded, .carouselChanged]), by: byTests)
        let cdn = try store.saveWebhook(
            Self.webhook("https://cdn.example.com/purge", [.carouselPublished]), by: byTests)
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

    @Test func eventsThisBuildDoesNotKnowAreLeftOutWhenRead() {
        #expect(
            WebhookRecord.events(stored: "screen.offline carousel.exploded carousel.changed") == [
                .screenOffline, .carouselChanged,
            ])
    }
}
