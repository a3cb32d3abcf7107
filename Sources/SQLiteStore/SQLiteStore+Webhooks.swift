import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: WebhookStore {
    // MARK: Webhooks

    public func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        try on(admin) { connection throws(SQLiteError) -> WebhookRecord? in
            // BEGIN IMMEDIATE: no other writer between the count and the insert.
            try connection.transaction { () throws(SQLiteError) -> WebhookRecord? in
                let count = try connection.statement("SELECT count(*) FROM webhooks")
                let kept = try count.step() ? count.integer(0) ?? 0 : 0
                count.reset()
                guard kept < limit else { return nil }
                let insert = try connection.statement(
                    """
                    INSERT INTO webhooks (url, events, secret, created_at, created_by)
                    VALUES (?1, ?2, ?3, ?4, ?5) RETURNING id
                    """
                ).bind(
                    .text(webhook.url), .text(webhook.storedEvents), .text(webhook.secret),
                    .integer(webhook.createdAt.nanosecondsSinceEpoch), .text(webhook.createdBy))
                let stored = try { () throws(SQLiteError) -> WebhookRecord in
                    defer { insert.reset() }
                    _ = try insert.step()
                    return webhook.stored(as: insert.integer(0) ?? 0)
                }()
                try Self.append([AuditEntry(.createWebhook, attribution, target: stored.auditTarget)], in: connection)
                return stored
            }
        }
    }

    public func webhooks() throws(StoreError) -> [WebhookRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(WebhookRecord.selectAll)
            defer { statement.reset() }
            var webhooks: [WebhookRecord] = []
            while try statement.step() { webhooks.append(WebhookRecord(row: statement)) }
            return webhooks
        }
    }

    public func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                let delete = try connection.statement("DELETE FROM webhooks WHERE id = ?1 RETURNING url")
                    .bind(.integer(id))
                let url = try { () throws(SQLiteError) -> String? in
                    defer { delete.reset() }
                    return try delete.step() ? delete.text(0) : nil
                }()
                guard let url else { return false }
                try connection.statement("DELETE FROM deliveries WHERE webhook = ?1").bind(.integer(id)).run()
                try Self.append(
                    [AuditEntry(.deleteWebhook, attribution, target: WebhookRecord.auditTarget(id: id, url: url))],
                    in: connection)
                return true
            }
        }
    }

    // MARK: Webhook deliveries

    // Delivery bookkeeping is on the admin connection, taking turns with admin writes in this
    // process (on the commands' connection it contended with them for SQLite's write lock, whose
    // busy handler sleeps: deliveries arrived ~200 ms late under a stream of admin writes), but
    // not synced (`bookkeeping`): an attempt's outcome survives the process being killed, and a
    // power loss at worst makes a delivery be sent again (receivers dedupe by its id,
    // docs/WEBHOOKS.md). The events themselves are queued in their write's transaction.

    /// `body` on the admin connection with `synchronous = NORMAL` (FULL again after).
    func bookkeeping<Result>(_ body: (SQLiteConnection) throws(SQLiteError) -> Result) throws(StoreError)
        -> Result
    {
        try on(admin) { connection throws(SQLiteError) -> Result in
            try connection.execute("PRAGMA synchronous = NORMAL")
            defer { try? connection.execute("PRAGMA synchronous = FULL") }
            return try body(connection)
        }
    }

    public func queue(_ events: [QueuedEvent]) throws(StoreError) {
        try bookkeeping { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in try Self.queue(events, in: connection) }
        }
    }

    /// Queues `events` for the webhooks that asked for them, in the caller's transaction.
    static func queue(_ events: [QueuedEvent], in connection: SQLiteConnection) throws(SQLiteError) {
        for event in events {
            try connection.statement(
                """
                INSERT INTO deliveries (webhook, event, type, body, created_at, next_attempt_at)
                SELECT id, ?1, ?2, ?3, ?4, ?4 FROM webhooks WHERE instr(' ' || events || ' ', ' ' || ?2 || ' ') > 0
                ON CONFLICT (webhook, event) DO NOTHING
                """
            ).bind(
                .text(event.id), .text(event.type.rawValue), .text(event.body),
                .integer(event.at.nanosecondsSinceEpoch)
            ).run()
        }
    }

    public func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError)
        -> [DueDelivery]
    {
        try bookkeeping { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> [DueDelivery] in
                let statement = try connection.statement(
                    """
                    SELECT d.id, d.webhook, d.event, d.type, d.body, d.created_at, d.attempts, w.url, w.secret
                    FROM deliveries d JOIN webhooks w ON w.id = d.webhook
                    WHERE d.next_attempt_at <= ?1 AND (d.claimed_until IS NULL OR d.claimed_until <= ?1)
                    ORDER BY d.next_attempt_at, d.id LIMIT ?2
                    """
                ).bind(.integer(now.nanosecondsSinceEpoch), .integer(Int64(limit)))
                var due: [DueDelivery] = []
                do {
                    defer { statement.reset() }
                    while try statement.step() {
                        due.append(
                            DueDelivery(
                                number: statement.integer(0) ?? 0, webhook: statement.integer(1) ?? 0,
                                event: statement.text(2) ?? "", type: statement.text(3) ?? "",
                                body: statement.text(4) ?? "",
                                createdAt: Timestamp(nanosecondsSinceEpoch: statement.integer(5) ?? 0),
                                attempts: Int(statement.integer(6) ?? 0), url: statement.text(7) ?? "",
                                secret: statement.text(8) ?? ""))
                    }
                }
                for delivery in due {
                    try connection.statement("UPDATE deliveries SET claimed_until = ?1 WHERE id = ?2")
                        .bind(.integer(until.nanosecondsSinceEpoch), .integer(delivery.number)).run()
                }
                return due
            }
        }
    }

    public func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        try bookkeeping { connection throws(SQLiteError) in
            try connection.statement(
                """
                UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = ?2, last_status = ?3,
                    last_error = ?4, delivered_at = ?5, next_attempt_at = ?6, claimed_until = NULL,
                    attempt_log = json_insert(coalesce(attempt_log, '[]'), '$[#]', json_array(?2, ?3, ?4))
                WHERE id = ?1
                """
            ).bind(
                .integer(number), .integer(attempt.at.nanosecondsSinceEpoch),
                attempt.status.map { .integer(Int64($0)) }, attempt.error.map { .text($0) },
                attempt.delivered ? .integer(attempt.at.nanosecondsSinceEpoch) : nil,
                attempt.delivered ? nil : retryAt.map { .integer($0.nanosecondsSinceEpoch) }
            ).run()
        }
    }

    public func nextDeliveryDue() throws(StoreError) -> Timestamp? {
        try bookkeeping { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT min(max(next_attempt_at, coalesce(claimed_until, 0))) FROM deliveries
                WHERE next_attempt_at IS NOT NULL
                """)
            defer { statement.reset() }
            return try statement.step() ? statement.integer(0).map(Timestamp.init(nanosecondsSinceEpoch:)) : nil
        }
    }

    public func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        try bookkeeping { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT \(DeliveryRecord.columns) FROM deliveries WHERE webhook = ?1 ORDER BY id DESC LIMIT ?2
                """
            ).bind(.integer(webhook), .integer(Int64(limit)))
            defer { statement.reset() }
            var records: [DeliveryRecord] = []
            while try statement.step() {
                records.append(
                    DeliveryRecord(row: statement))
            }
            return records
        }
    }

    public func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        try bookkeeping { connection throws(SQLiteError) in
            try connection.statement(
                """
                DELETE FROM deliveries WHERE next_attempt_at IS NULL
                    AND coalesce(delivered_at, last_attempt_at, created_at) < ?1
                """
            ).bind(.integer(cutoff.nanosecondsSinceEpoch)).run()
            return connection.changes
        }
    }
}
