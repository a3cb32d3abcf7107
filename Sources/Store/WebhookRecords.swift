import TimeZones

/// What a webhook can be told of (docs/WEBHOOKS.md).
public enum WebhookEvent: String, Sendable, CaseIterable {
    /// An admin change or a restore of a carousel's definition.
    case carouselChanged = "carousel.changed"
    /// A scheduled change took effect (docs/SCHEDULED.md).
    case carouselPublished = "carousel.published"
    case takeoverStarted = "takeover.started"
    case takeoverEnded = "takeover.ended"
    /// A screen stopped reporting, came back, or shows another banner than its carousel's
    /// (docs/SCREENS.md).
    case screenOffline = "screen.offline"
    case screenOnline = "screen.online"
    case screenOutOfStep = "screen.out-of-step"
}

/// A webhook as a store keeps it. Its secret is kept as given: the service signs each delivery
/// with it (HMAC-SHA256), so unlike a token's it cannot be kept as a digest.
public struct WebhookRecord: Sendable, Hashable {
    /// The store's (an id given to `saveWebhook` is ignored).
    public let id: Int64
    public let url: String
    /// The events it is told of, in the order `WebhookEvent` lists them.
    public let events: [WebhookEvent]
    public let secret: String
    public let createdAt: Timestamp
    /// The actor that created it.
    public let createdBy: String

    public init(
        id: Int64 = 0, url: String, events: [WebhookEvent], secret: String, createdAt: Timestamp, createdBy: String
    ) {
        self.id = id
        self.url = url
        self.events = WebhookEvent.allCases.filter(events.contains)
        self.secret = secret
        self.createdAt = createdAt
        self.createdBy = createdBy
    }

    /// This record with the store's id.
    public func stored(as id: Int64) -> WebhookRecord {
        WebhookRecord(id: id, url: url, events: events, secret: secret, createdAt: createdAt, createdBy: createdBy)
    }

    /// What the audit log names: its id and URL (never its secret).
    public var auditTarget: String { Self.auditTarget(id: id, url: url) }

    /// What the audit log names for webhook `id` to `url` (a deletion knows no more of it).
    public static func auditTarget(id: Int64, url: String) -> String { "\(id) \(url)" }

    /// Its events as a store keeps them: names joined by spaces.
    public var storedEvents: String { events.map(\.rawValue).joined(separator: " ") }

    /// `storedEvents` read back (a name this build does not know is left out).
    public static func events(stored text: String) -> [WebhookEvent] {
        text.split(separator: " ").compactMap { WebhookEvent(rawValue: String($0)) }
    }
}

/// Webhooks and their deliveries (docs/WEBHOOKS.md).
public protocol WebhookStore: AnyObject, Sendable {
    /// Webhooks (docs/WEBHOOKS.md): stores `webhook` (its id is the store's), durable before it
    /// returns, with its audit entry (`webhook.create` by `attribution`, target its id and URL);
    /// nil, storing nothing, when `limit` webhooks are kept already: counted in the same
    /// transaction, so that requests racing each other (on any replica) never pass it.
    func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?

    /// Every webhook, by id.
    func webhooks() throws(StoreError) -> [WebhookRecord]

    /// Deletes webhook `id` and its deliveries; false when there is none. The audit log keeps the deletion, by
    /// `attribution`.
    func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool

    /// Webhook deliveries (docs/WEBHOOKS.md): queues one delivery of each event per webhook that
    /// asked for its type, due at once, in one transaction that survives the process being
    /// killed; an event queued for a webhook already (same id) is not queued again. (A write's
    /// own events, `QueuedEvent.told` of its audit entries, and those of creations, deletions and imports, are
    /// queued by the store in the write's transaction.)
    func queue(_ events: [QueuedEvent]) throws(StoreError)

    /// Claims the deliveries due at `now`, soonest first, `limit` at most, until `until`: no
    /// process, this one or another sharing the store, claims them again before then.
    func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError) -> [DueDelivery]

    /// Keeps how delivery `number`'s attempt went and releases its claim: delivered when the
    /// attempt was, else due again at `retryAt` (nil: given up).
    func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError)

    /// When the soonest delivery waiting is due (one claimed: when its claim runs out); nil when
    /// none waits.
    func nextDeliveryDue() throws(StoreError) -> Timestamp?

    /// Webhook `webhook`'s deliveries, newest first, `limit` at most.
    func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord]

    /// Forgets the deliveries delivered or given up before `cutoff`; returns how many.
    func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int
}

extension WebhookRecord {
    /// The columns a SQL store keeps a webhook in, in the order `init(row:)` reads them.
    public static let columns = "id, url, events, secret, created_at, created_by"
    /// Every webhook, by id: the statement both SQL stores send.
    public static let selectAll = "SELECT \(columns) FROM webhooks ORDER BY id"

    /// A row of `columns` as read.
    public init(row: some SQLRow) {
        self.init(
            id: row.integer(0) ?? 0, url: row.text(1) ?? "", events: WebhookRecord.events(stored: row.text(2) ?? ""),
            secret: row.text(3) ?? "", createdAt: row.timestamp(4) ?? Timestamp(nanosecondsSinceEpoch: 0),
            createdBy: row.text(5) ?? "")
    }
}
