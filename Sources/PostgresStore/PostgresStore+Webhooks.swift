import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: WebhookStore {
    // MARK: Webhooks

    public func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        try on(admin) { connection throws(PostgresError) -> WebhookRecord? in
            try Self.transaction(connection) { () throws(PostgresError) -> WebhookRecord? in
                // Creations wait for each other (on every replica) from the count to the commit;
                // reads and deliveries do not.
                try connection.run("LOCK TABLE webhooks IN SHARE ROW EXCLUSIVE MODE")
                let count = try connection.run("SELECT count(*) FROM webhooks")
                guard (count.first?[0].flatMap { Int($0) } ?? 0) < limit else { return nil }
                let rows = try connection.execute(
                    """
                    INSERT INTO webhooks (url, events, secret, created_at, created_by)
                    VALUES ($1, $2, $3, $4, $5) RETURNING id
                    """,
                    [
                        webhook.url, webhook.storedEvents, webhook.secret,
                        String(webhook.createdAt.nanosecondsSinceEpoch), webhook.createdBy,
                    ])
                let stored = webhook.stored(as: rows.first?[0].flatMap { Int64($0) } ?? 0)
                try Self.append([AuditEntry(.createWebhook, attribution, target: stored.auditTarget)], on: connection)
                return stored
            }
        }
    }

    public func webhooks() throws(StoreError) -> [WebhookRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(WebhookRecord.selectAll)
        }
        return rows.map { WebhookRecord(row: PostgresRow($0)) }
    }

    public func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(PostgresError) -> Bool in
            try Self.transaction(connection) { () throws(PostgresError) -> Bool in
                let rows = try connection.execute("DELETE FROM webhooks WHERE id = $1 RETURNING url", [String(id)])
                guard let row = rows.first else { return false }
                try connection.execute("DELETE FROM deliveries WHERE webhook = $1", [String(id)])
                try Self.append(
                    [
                        AuditEntry(
                            .deleteWebhook, attribution, target: WebhookRecord.auditTarget(id: id, url: row[0] ?? ""))
                    ], on: connection)
                return true
            }
        }
    }

    // MARK: Webhook deliveries

    // Bookkeeping on the commands' connection, so that sending never waits behind admin writes.

    public func queue(_ events: [QueuedEvent]) throws(StoreError) {
        try on(commands) { connection throws(PostgresError) in try Self.queue(events, on: connection) }
    }

    /// Queues `events` for the webhooks that asked for them, in the caller's transaction (if any).
    static func queue(_ events: [QueuedEvent], on connection: PostgresConnection) throws(PostgresError) {
        guard !events.isEmpty else { return }
        var parameters: [String?] = []
        try connection.execute("WITH \(queueing(events, after: nil, &parameters)) SELECT 1", parameters)
    }

    public func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError)
        -> [DueDelivery]
    {
        // Rows another replica is claiming at this instant are skipped, not waited for: each
        // delivery is claimed by one process (docs/WEBHOOKS.md).
        let rows = try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                """
                UPDATE deliveries d SET claimed_until = $2 FROM webhooks w
                WHERE w.id = d.webhook AND d.id IN (
                    SELECT id FROM deliveries
                    WHERE next_attempt_at <= $1 AND (claimed_until IS NULL OR claimed_until <= $1)
                    ORDER BY next_attempt_at, id LIMIT $3 FOR UPDATE SKIP LOCKED)
                RETURNING d.id, d.webhook, d.event, d.type, d.body, d.created_at, d.attempts, w.url, w.secret
                """,
                [String(now.nanosecondsSinceEpoch), String(until.nanosecondsSinceEpoch), String(limit)])
        }
        return rows.map { row in
            let integer = { (column: Int) in row[column].flatMap { Int64($0) } ?? 0 }
            return DueDelivery(
                number: integer(0), webhook: integer(1), event: row[2] ?? "", type: row[3] ?? "", body: row[4] ?? "",
                createdAt: Timestamp(nanosecondsSinceEpoch: integer(5)), attempts: Int(integer(6)), url: row[7] ?? "",
                secret: row[8] ?? "")
        }.sorted { $0.number < $1.number }
    }

    public func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        let at = String(attempt.at.nanosecondsSinceEpoch)
        _ = try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                """
                UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = $2, last_status = $3,
                    last_error = $4, delivered_at = $5, next_attempt_at = $6, claimed_until = NULL,
                    attempt_log = coalesce(attempt_log, '[]'::jsonb)
                        || jsonb_build_array(jsonb_build_array($2::bigint, $3::integer, $4::text))
                WHERE id = $1
                """,
                [
                    String(number), at, attempt.status.map { String($0) }, attempt.error,
                    attempt.delivered ? at : nil,
                    attempt.delivered ? nil : retryAt.map { String($0.nanosecondsSinceEpoch) },
                ])
        }
    }

    public func nextDeliveryDue() throws(StoreError) -> Timestamp? {
        let rows = try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT min(greatest(next_attempt_at, coalesce(claimed_until, 0))) FROM deliveries
                WHERE next_attempt_at IS NOT NULL
                """)
        }
        return rows.first?[0].flatMap { Int64($0) }.map(Timestamp.init(nanosecondsSinceEpoch:))
    }

    public func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        let rows = try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                "SELECT \(DeliveryRecord.columns) FROM deliveries WHERE webhook = $1 ORDER BY id DESC LIMIT $2",
                [String(webhook), String(limit)])
        }
        return rows.map { row in
            DeliveryRecord(row: PostgresRow(row))
        }
    }

    public func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        let rows = try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                """
                WITH forgotten AS (
                    DELETE FROM deliveries WHERE next_attempt_at IS NULL
                        AND coalesce(delivered_at, last_attempt_at, created_at) < $1 RETURNING 1)
                SELECT count(*) FROM forgotten
                """, [String(cutoff.nanosecondsSinceEpoch)])
        }
        return rows.first?[0].flatMap { Int($0) } ?? 0
    }
}
