import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: HistoryStore {
    // MARK: Scheduled changes

    /// The payload that tells replicas a change was scheduled, cancelled or made.
    static let pendingPayload = "*pending"

    public func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange {
        let id = try on(admin) { connection throws(PostgresError) -> Int64? in
            try Self.transaction(connection) { () throws(PostgresError) -> Int64? in
                // Locked: a deletion of the carousel waits, or comes first and is seen.
                let rows = try connection.execute(
                    "SELECT name FROM carousels WHERE serial = $1 FOR SHARE", [String(change.carousel)])
                guard let name = rows.first?[0] else { return nil }
                let inserted = try connection.execute(
                    """
                    INSERT INTO pending (carousel, at, method, path, body, if_match, actor, request_id, created_at)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id
                    """,
                    [
                        String(change.carousel), String(change.at.nanosecondsSinceEpoch), change.method, change.path,
                        change.body, change.ifMatch, change.requester.actor, change.requester.requestID,
                        String(change.createdAt.nanosecondsSinceEpoch),
                    ])
                let id = inserted.first?[0].flatMap { Int64($0) } ?? 0
                try Self.append(
                    [
                        AuditEntry(
                            .scheduleChange, by: change.requester, at: change.createdAt, carousel: name,
                            target: String(id))
                    ], on: connection)
                try connection.run("SELECT pg_notify('\(Self.channel)', '\(Self.pendingPayload)')")
                return id
            }
        }
        guard let id else { throw .notFound(name: "#\(change.carousel)") }
        return change.stored(as: id)
    }

    public func pendingChanges() throws(StoreError) -> [PendingChange] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(PendingChange.selectAll)
        }
        return rows.map { PendingChange(row: PostgresRow($0)) }
    }

    public func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(PostgresError) -> Bool in
            try Self.transaction(connection) { () throws(PostgresError) -> Bool in
                let rows = try connection.execute(
                    """
                    WITH cancelled AS (DELETE FROM pending WHERE id = $1 AND carousel = $2 RETURNING carousel)
                    SELECT c.name FROM cancelled LEFT JOIN carousels c ON c.serial = cancelled.carousel
                    """, [String(id), String(carousel)])
                guard let row = rows.first else { return false }
                try Self.append(
                    [AuditEntry(.cancelChange, attribution, carousel: row[0], target: String(id))], on: connection)
                try connection.run("SELECT pg_notify('\(Self.channel)', '\(Self.pendingPayload)')")
                return true
            }
        }
    }

    // MARK: Audit log

    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT \(AuditRecord.columns) FROM audit
                WHERE ($1::bigint IS NULL OR at >= $1) AND ($2::bigint IS NULL OR at < $2)
                    AND ($3::text IS NULL OR carousel = $3) AND ($4::text IS NULL OR actor = $4)
                    AND ($5::bigint IS NULL OR seq < $5)
                ORDER BY seq DESC LIMIT $6
                """,
                [
                    query.from.map { String($0.nanosecondsSinceEpoch) },
                    query.to.map { String($0.nanosecondsSinceEpoch) },
                    query.carousel, query.actor, query.before.map { String($0) }, String(query.limit),
                ])
        }
        return rows.map { AuditRecord(row: PostgresRow($0)) }
    }

    static let auditColumns = "at, actor, action, carousel, target, revision, request_id"

    /// `VALUES` rows of `entries`, their values appended to `parameters`.
    static func auditValues(_ entries: [AuditEntry], _ parameters: inout [String?]) -> String {
        "VALUES "
            + entries.map { entry in
                let first = parameters.count + 1
                parameters += [
                    String(entry.at.nanosecondsSinceEpoch), entry.actor, entry.action.rawValue, entry.carousel,
                    entry.target, entry.revision.map { String($0) }, entry.requestID,
                ]
                let types = ["bigint", "text", "text", "text", "text", "bigint", "text"]
                return "(" + types.enumerated().map { "$\(first + $0)::\($1)" }.joined(separator: ", ") + ")"
            }.joined(separator: ", ")
    }

    /// The common table expression `audited` that appends `entries` (at least one) to the audit
    /// log when `source` (a CTE written before it) wrote a row: in the same statement as the write.
    /// With it, `queued`: the deliveries of what the entries tell webhooks (`published`: the write
    /// makes a scheduled change), when there are any.
    static func auditing(
        _ entries: [AuditEntry], published: Bool = false, after source: String, _ parameters: inout [String?]
    ) -> String {
        let events = QueuedEvent.told(by: entries, published: published)
        let queued = events.isEmpty ? "" : ", " + queueing(events, after: source, &parameters)
        #if NO_AUDIT_LOG
            // `make bench`'s second build: the same statement without the entries (docs/PERFORMANCE.md).
            return "audited AS (SELECT 1)" + queued
        #else
            return """
                audited AS (
                    INSERT INTO audit (\(auditColumns)) SELECT * FROM (\(auditValues(entries, &parameters))) entry
                    WHERE EXISTS (SELECT 1 FROM \(source)))
                """ + queued
        #endif
    }

    /// The common table expression `queued` that queues `events` (at least one) for the webhooks
    /// that asked for them when `source` (a CTE written before it, or nil) wrote a row.
    static func queueing(_ events: [QueuedEvent], after source: String?, _ parameters: inout [String?])
        -> String
    {
        let values = events.map { event in
            let first = parameters.count + 1
            parameters += [event.id, event.type.rawValue, event.body, String(event.at.nanosecondsSinceEpoch)]
            return "($\(first)::text, $\(first + 1)::text, $\(first + 2)::text, $\(first + 3)::bigint)"
        }.joined(separator: ", ")
        return """
            queued AS (
                INSERT INTO deliveries (webhook, event, type, body, created_at, next_attempt_at)
                SELECT w.id, e.event, e.type, e.body, e.at, e.at
                FROM (VALUES \(values)) e (event, type, body, at)
                JOIN webhooks w ON strpos(' ' || w.events || ' ', ' ' || e.type || ' ') > 0
                \(source.map { "WHERE EXISTS (SELECT 1 FROM \($0))" } ?? "")
                ON CONFLICT (webhook, event) DO NOTHING)
            """
    }

    /// Appends `entries` to the audit log, in the caller's transaction, and queues what they
    /// tell webhooks.
    static func append(_ entries: [AuditEntry], on connection: PostgresConnection) throws(PostgresError) {
        try queue(QueuedEvent.told(by: entries), on: connection)
        #if NO_AUDIT_LOG
            let entries: [AuditEntry] = []  // `make bench`'s second build (docs/PERFORMANCE.md)
        #endif
        guard !entries.isEmpty else { return }
        var parameters: [String?] = []
        let values = auditValues(entries, &parameters)
        try connection.execute("INSERT INTO audit (\(auditColumns)) \(values)", parameters)
    }

    // MARK: History

    public func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(RevisionRecord.selectAll(.postgres), [String(serial)])
        }
        return rows.map { RevisionRecord(row: PostgresRow($0)) }
    }

    public func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(RevisionRecord.selectOne(.postgres), [String(serial), String(revision)])
        }
        guard let row = rows.first.map(PostgresRow.init) else { return nil }
        let definition = try DecodedDefinitions.decode(
            row.text(4) ?? "", of: "revision \(revision) of carousel \(serial)", store: description)
        return Revision(record: RevisionRecord(row: row), definition: definition)
    }
}
