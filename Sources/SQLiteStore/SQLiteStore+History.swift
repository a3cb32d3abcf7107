import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: HistoryStore {
    // MARK: Scheduled changes

    public func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange {
        let id = try on(admin) { connection throws(SQLiteError) -> Int64? in
            try connection.transaction { () throws(SQLiteError) -> Int64? in
                guard let name = try Self.name(of: change.carousel, in: connection) else { return nil }
                let insert = try connection.statement(
                    """
                    INSERT INTO pending (carousel, at, method, path, body, if_match, actor, request_id, created_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id
                    """
                ).bind(
                    .integer(change.carousel), .integer(change.at.nanosecondsSinceEpoch), .text(change.method),
                    .text(change.path), .text(change.body), change.ifMatch.map { .text($0) },
                    .text(change.requester.actor), change.requester.requestID.map { .text($0) },
                    .integer(change.createdAt.nanosecondsSinceEpoch))
                let id = try { () throws(SQLiteError) -> Int64 in
                    defer { insert.reset() }
                    _ = try insert.step()
                    return insert.integer(0) ?? 0
                }()
                try Self.append(
                    [
                        AuditEntry(
                            .scheduleChange, by: change.requester, at: change.createdAt, carousel: name,
                            target: String(id))
                    ], in: connection)
                return id
            }
        }
        guard let id else { throw .notFound(name: "#\(change.carousel)") }
        return change.stored(as: id)
    }

    public func pendingChanges() throws(StoreError) -> [PendingChange] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(PendingChange.selectAll)
            defer { statement.reset() }
            var changes: [PendingChange] = []
            while try statement.step() {
                changes.append(PendingChange(row: statement))
            }
            return changes
        }
    }

    public func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                try connection.statement("DELETE FROM pending WHERE id = ?1 AND carousel = ?2")
                    .bind(.integer(id), .integer(carousel)).run()
                guard connection.changes > 0 else { return false }
                try Self.append(
                    [
                        AuditEntry(
                            .cancelChange, attribution, carousel: try Self.name(of: carousel, in: connection),
                            target: String(id))
                    ], in: connection)
                return true
            }
        }
    }

    /// The name of the carousel of serial `serial`, if one is stored.
    static func name(of serial: Int64, in connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let statement = try connection.statement("SELECT name FROM carousels WHERE serial = ?1").bind(.integer(serial))
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    // MARK: Audit log

    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT \(AuditRecord.columns) FROM audit
                WHERE (?1 IS NULL OR at >= ?1) AND (?2 IS NULL OR at < ?2) AND (?3 IS NULL OR carousel = ?3)
                    AND (?4 IS NULL OR actor = ?4) AND (?5 IS NULL OR seq < ?5)
                ORDER BY seq DESC LIMIT ?6
                """
            ).bind(
                query.from.map { .integer($0.nanosecondsSinceEpoch) },
                query.to.map { .integer($0.nanosecondsSinceEpoch) },
                query.carousel.map { .text($0) }, query.actor.map { .text($0) }, query.before.map { .integer($0) },
                .integer(Int64(query.limit)))
            defer { statement.reset() }
            var records: [AuditRecord] = []
            while try statement.step() {
                records.append(AuditRecord(row: statement))
            }
            return records
        }
    }

    /// Appends `entries` to the audit log, in the caller's transaction, and queues what they tell
    /// webhooks (`published`: the write makes a scheduled change). (`make bench`'s second build,
    /// `-DNO_AUDIT_LOG`, appends nothing: the same writes without their entries, to measure what
    /// the log costs them, docs/PERFORMANCE.md.)
    static func append(_ entries: [AuditEntry], published: Bool = false, in connection: SQLiteConnection)
        throws(SQLiteError)
    {
        try queue(QueuedEvent.told(by: entries, published: published), in: connection)
        #if NO_AUDIT_LOG
            let entries: [AuditEntry] = []
        #endif
        for entry in entries {
            try connection.statement(
                """
                INSERT INTO audit (at, actor, action, carousel, target, revision, request_id)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                """
            ).bind(
                .integer(entry.at.nanosecondsSinceEpoch), .text(entry.actor), .text(entry.action.rawValue),
                entry.carousel.map { .text($0) }, entry.target.map { .text($0) },
                entry.revision.map { .integer(Int64(clamping: $0)) }, entry.requestID.map { .text($0) }
            ).run()
        }
    }

    // MARK: History

    public func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(RevisionRecord.selectAll(.sqlite)).bind(.integer(serial))
            defer { statement.reset() }
            var records: [RevisionRecord] = []
            while try statement.step() { records.append(RevisionRecord(row: statement)) }
            return records
        }
    }

    public func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        let row = try on(admin) { connection throws(SQLiteError) -> (RevisionRecord, String)? in
            let statement = try connection.statement(RevisionRecord.selectOne(.sqlite)).bind(
                .integer(serial), .integer(Int64(clamping: revision)))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            return (RevisionRecord(row: statement), statement.text(4) ?? "")
        }
        guard let (record, text) = row else { return nil }
        let definition = try DecodedDefinitions.decode(
            text, of: "revision \(revision) of carousel \(serial)", store: description)
        return Revision(record: record, definition: definition)
    }
}
