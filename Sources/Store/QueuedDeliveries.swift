import Digest
import JSON
import TimeZones

/// An event to tell every webhook that asked for its type (docs/WEBHOOKS.md): a store queues one
/// delivery of it per such webhook, in the transaction of what caused it.
public struct QueuedEvent: Sendable, Hashable {
    /// The body's `id` and the `X-Carousel-Delivery` header: a receiver that sees it twice (a
    /// retry after its answer was lost) knows it is a repeat. A store queues an event once per
    /// webhook: the same id again is not queued twice.
    public let id: String
    public let type: WebhookEvent
    public let at: Timestamp
    /// The POST's body, as sent: `{"id", "type", "at", "data"}`.
    public let body: String

    public init(id: String = UUIDText.random(), type: WebhookEvent, at: Timestamp, data: JSONObject) {
        self.id = id
        self.type = type
        self.at = at
        var body = JSONObject()
        body.add("id", id)
        body.add("type", type.rawValue)
        body.add("at", at.rfc3339)
        body.add("data", data)
        self.body = String(decoding: body.bytes, as: UTF8.self)
    }

    /// The events the audited writes `entries` are told as: an admin change of a carousel's
    /// definition (or its restore, creation, deletion, import) is `carousel.changed`, or
    /// `carousel.published` when it makes a scheduled change (`published`); a scheduled change
    /// dropped (`change.skip`) is `carousel.published` too, with `"applied": false`; takeovers
    /// started and ended by a command are `takeover.started` and `takeover.ended`. Their data is
    /// the audit entry (docs/AUDIT.md) without its number.
    public static func told(by entries: [AuditEntry], published: Bool = false) -> [QueuedEvent] {
        entries.compactMap { entry in
            guard let (type, applied) = telling(entry.action, published: published) else { return nil }
            var data = JSONObject()
            entry.addFields(to: &data)
            if let applied { data.add("applied", applied) }
            return QueuedEvent(type: type, at: entry.at, data: data)
        }
    }

    /// The event an audited write of `action` is told as, and its data's `applied` (for
    /// `carousel.published` only); nil when webhooks are not told of it.
    static func telling(_ action: AuditAction, published: Bool) -> (type: WebhookEvent, applied: Bool?)? {
        switch action {
        case .startTakeover: (.takeoverStarted, nil)
        case .endTakeover: (.takeoverEnded, nil)
        case .skipChange: (.carouselPublished, false)
        case _ where changesDefinitions.contains(action):
            published ? (.carouselPublished, true) : (.carouselChanged, nil)
        default: nil
        }
    }

    /// The audited actions that change a carousel's definition (or the carousel itself).
    private static let changesDefinitions: Set<AuditAction> = [
        .createCarousel, .replaceCarousel, .patchCarousel, .deleteCarousel, .restoreRevision, .importCarousel,
        .addBanner, .replaceBanner, .patchBanner, .deleteBanner, .reorderBanners,
    ]
}

extension CarouselWrite {
    /// Whether this write tells webhooks anything (`QueuedEvent.told`, queued in its transaction),
    /// without making the events.
    public var tellsWebhooks: Bool {
        audit.contains { QueuedEvent.telling($0.action, published: applying != nil) != nil }
    }
}

/// A delivery claimed for an attempt: what to send, and where.
public struct DueDelivery: Sendable, Hashable {
    /// The store's number for this delivery (one event to one webhook).
    public let number: Int64
    public let webhook: Int64
    public let event: String
    public let type: String
    public let body: String
    public let createdAt: Timestamp
    /// Attempts made before this one.
    public let attempts: Int
    public let url: String
    public let secret: String

    public init(
        number: Int64, webhook: Int64, event: String, type: String, body: String, createdAt: Timestamp, attempts: Int,
        url: String, secret: String
    ) {
        self.number = number
        self.webhook = webhook
        self.event = event
        self.type = type
        self.body = body
        self.createdAt = createdAt
        self.attempts = attempts
        self.url = url
        self.secret = secret
    }
}

/// How one attempt went: the receiver's status, or why there was none.
public struct DeliveryAttempt: Sendable, Hashable {
    public let at: Timestamp
    public let status: Int?
    /// Why it failed, for an operator (`connection refused`, `timed out after 10 s`, `HTTP 500`).
    public let error: String?

    public init(at: Timestamp, status: Int?, error: String?) {
        self.at = at
        self.status = status
        self.error = error
    }

    /// Any 2xx is a delivery (docs/WEBHOOKS.md).
    public var delivered: Bool { error == nil && status.map { (200..<300).contains($0) } ?? false }
}

/// A delivery as `GET /webhooks/{id}/deliveries` lists it.
public struct DeliveryRecord: Sendable, Hashable {
    public let number: Int64
    public let event: String
    public let type: String
    public let createdAt: Timestamp
    public let attempts: Int
    /// When it is tried next; nil once delivered or given up.
    public let nextAttemptAt: Timestamp?
    public let deliveredAt: Timestamp?
    /// The last attempt's.
    public let lastAttempt: DeliveryAttempt?
    /// Every attempt, oldest first (at most some 150: retries stop after a day, `DeliveryRetry`);
    /// those made before a store kept them are counted in `attempts` only.
    public let attemptLog: [DeliveryAttempt]

    public init(
        number: Int64, event: String, type: String, createdAt: Timestamp, attempts: Int, nextAttemptAt: Timestamp?,
        deliveredAt: Timestamp?, lastAttempt: DeliveryAttempt?, attemptLog: [DeliveryAttempt]
    ) {
        self.number = number
        self.event = event
        self.type = type
        self.createdAt = createdAt
        self.attempts = attempts
        self.nextAttemptAt = nextAttemptAt
        self.deliveredAt = deliveredAt
        self.lastAttempt = lastAttempt
        self.attemptLog = attemptLog
    }

    /// The columns a SQL store keeps it in, in this order.
    public static let columns =
        "id, event, type, created_at, attempts, next_attempt_at, delivered_at, last_attempt_at, last_status, last_error, "
        + "attempt_log"

    /// A row of `columns` as read (times in nanoseconds since the epoch).
    public init(row: some SQLRow) {
        let status = row.integer(8).map { Int($0) }
        let error = row.text(9)
        self.init(
            number: row.integer(0) ?? 0, event: row.text(1) ?? "", type: row.text(2) ?? "",
            createdAt: row.timestamp(3) ?? Timestamp(nanosecondsSinceEpoch: 0), attempts: Int(row.integer(4) ?? 0),
            nextAttemptAt: row.timestamp(5), deliveredAt: row.timestamp(6),
            lastAttempt: row.timestamp(7).map { DeliveryAttempt(at: $0, status: status, error: error) },
            attemptLog: row.text(10).map(Self.attemptLog(stored:)) ?? [])
    }

    /// The attempts an `attempt_log` column holds, `[[at, status, error], …]` (`at` in nanoseconds
    /// since the epoch; `status` and `error` null when absent); an entry not of that shape is
    /// left out.
    static func attemptLog(stored text: String) -> [DeliveryAttempt] {
        guard case .array(let entries)? = try? JSONParser.parse(Array(text.utf8)) else { return [] }
        return entries.compactMap { entry in
            guard case .array(let fields) = entry, fields.count == 3, case .number(let at) = fields[0],
                let nanoseconds = at.integralValue
            else { return nil }
            var status: Int?
            if case .number(let number) = fields[1] { status = number.integralValue }
            var error: String?
            if case .string(let text) = fields[2] { error = text }
            return DeliveryAttempt(
                at: Timestamp(nanosecondsSinceEpoch: Int64(nanoseconds)), status: status, error: error)
        }
    }

    public enum State: String, Sendable {
        case pending, delivered
        /// Not delivered within `DeliveryRetry.giveUpAfter`.
        case failed
    }

    public var state: State { deliveredAt != nil ? .delivered : nextAttemptAt != nil ? .pending : .failed }
}

/// When a failed delivery is tried again (docs/WEBHOOKS.md): 1 s after the first attempt, then
/// twice as long each time, at most 10 minutes apart, until 24 hours after the event.
public enum DeliveryRetry {
    public static let first: Duration = .seconds(1)
    public static let longest: Duration = .seconds(600)
    public static let giveUpAfter: Duration = .seconds(86_400)
    /// How long a process that claimed a delivery has to try it before another may: longer than
    /// an attempt can take (`timeout`).
    public static let claim: Duration = .seconds(30)
    /// How long the receiver has to answer.
    public static let timeout: Duration = .seconds(10)
    /// How long delivered and failed deliveries stay listed.
    public static let kept: Duration = .seconds(7 * 86_400)

    /// When to try again after the attempt made at `now`, the `attempts`-th that failed; nil when
    /// that is past 24 hours after `createdAt`: given up.
    public static func next(afterFailed attempts: Int, createdAt: Timestamp, now: Timestamp) -> Timestamp? {
        let doublings = min(max(attempts - 1, 0), 20)
        let wait = min(first * (1 << doublings), longest)
        let next = now + wait
        return next - createdAt <= giveUpAfter ? next : nil
    }
}
