import CPostgres
import Carousel
import Definitions
import Glibc
import Locking
import Store
import TimeZones

/// Carousels in a PostgreSQL database that several replicas share (docs/STORE.md, PostgreSQL):
/// every change is one transaction on the carousel's row (`SELECT … FOR UPDATE`, so that writers
/// on different replicas take turns and none is lost) that ends with a `NOTIFY`; every replica
/// `LISTEN`s (`ChangeListener`) and reloads what changed. Two connections, one per purpose
/// (admin changes and loading; commands), each reconnected when it breaks, and the listener's.
/// While the server cannot be reached, every call throws `.unavailable`, fast.
public final class PostgresStore: CarouselStore {
    /// The schema this build writes; `migrations[n]` takes a database from version n to n + 1.
    public static let schemaVersion = migrations.count
    /// The channel every change is announced on; its payload is the carousel's name.
    static let channel = "banner_carousel_changes"
    /// How long a connection that failed is left alone before a write tries it again.
    static let retryPause: Duration = .seconds(1)

    public let description: String
    public var identity: String { status.withLock { $0.identity ?? "" } }
    public var isReadOnly: Bool { false }
    public var isShared: Bool { true }
    public var unreachable: String? { status.withLock { $0.unreachable } }

    private let parameters: [(keyword: String, value: String)]
    private let definitions = DecodedDefinitions()
    private let admin = Lock(Slot())
    private let commands = Lock(Slot())
    private let status: Lock<Status>
    private let listener: ChangeListener

    private struct Slot {
        var connection: PostgresConnection?
        var lastAttempt: ContinuousClock.Instant?
        /// Why the last attempt to connect failed, while no connection succeeded since.
        var lastFailure: StoreError?
    }

    private struct Status {
        /// From the database, once reached.
        var identity: String?
        /// Why the database cannot be reached now, as the listener last found; nil while it can.
        var unreachable: String?
    }

    /// A store on the database at `uri` (`postgres://…` or `postgresql://…`). Throws `.unusable`
    /// when the URI is malformed or the database's schema is newer than this build's. A database
    /// that cannot be reached now is no error: the store waits for it (`unreachable` says why).
    public init(uri: String) throws(StoreError) {
        let location = try Self.parse(uri)
        description = "PostgreSQL store \(location)"
        // Defaults first, so that the URI's own settings win (libpq: a later keyword wins).
        parameters = [
            ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "5"),
            ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("application_name", "banner-server"), ("dbname", uri),
        ]
        status = Lock(Status(unreachable: "\(location) has not been reached yet"))
        listener = ChangeListener(parameters: parameters, channel: Self.channel, describe: location)
        do {
            _ = try on(admin) { _ throws(PostgresError) in }
        } catch {
            if case .unusable = error { throw error }
            // Why, until the listener (started later) has tried for itself: `/readyz` says it.
            if case .unavailable(let reason) = error { status.withLock { $0.unreachable = reason } }
        }
    }

    deinit {
        listener.stop()
    }

    // MARK: CarouselStore

    public func loadAll() throws(StoreError) -> [StoredCarousel] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute("SELECT \(Self.columns) FROM carousels ORDER BY name")
        }
        return try rows.map { (row) throws(StoreError) in try decoded(row, keeping: false) }
    }

    public func load(named name: String) throws(StoreError) -> StoredCarousel? {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute("SELECT \(Self.columns) FROM carousels WHERE name = $1", [name])
        }
        return try rows.first.map { (row) throws(StoreError) in try decoded(row) }
    }

    public func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel
    {
        let images = definition.libraryImages(broughtInOver: nil)
        var missing: [String] = []
        let rows = try on(admin) { connection throws(PostgresError) in
            let insert = { () throws(PostgresError) -> [[String?]] in
                var parameters = [definition.name, definition.storedText] + Self.parameters(AnchorColumns(anchor))
                let kept = Self.keeping(Revision(of: definition, over: nil, attribution), of: "created", &parameters)
                let audited = Self.auditing(
                    [AuditEntry(.createCarousel, attribution, carousel: definition.name, revision: 1)],
                    after: "created", &parameters)
                return try connection.execute(
                    """
                    WITH created AS (\(Self.insertRow) ON CONFLICT (name) DO NOTHING RETURNING *), \(kept), \(audited)
                    SELECT serial, \(Self.note) FROM created
                    """, parameters)
            }
            guard !images.isEmpty else { return try insert() }
            return try Self.transaction(connection) { () throws(PostgresError) -> [[String?]] in
                missing = try Self.missingImages(images, on: connection)
                return missing.isEmpty ? try insert() : []
            }
        }
        guard missing.isEmpty else { throw .missingMedia(missing) }
        guard let serial = rows.first?[0].flatMap({ Int64($0) }) else { throw .duplicate(name: definition.name) }
        return StoredCarousel(definition: definition, revision: 1, anchor: anchor, serial: serial)
    }

    public func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        var undecodable: StoreError?
        var missing: [String] = []
        var notPending: Int64?
        let stored = try on(purpose.isAdmin ? admin : commands) {
            connection throws(PostgresError) -> StoredCarousel? in
            // The change decided on what the caller expects, written only if the row is still
            // exactly that: one statement, committed on its own. Otherwise (another replica
            // changed it meanwhile, or the change brings in library images, whose rows must be
            // locked with it), the transaction below, on the row as it is.
            // A write making a pending change claims it first: always the transaction.
            if let expected, expected.key == key, let write = decide(expected), write.applying == nil {
                let changed = write.carousel
                precondition(changed.key == key, "a change cannot rename a carousel or give it another serial")
                let bringsImages =
                    purpose.isAdmin && !changed.definition.libraryImages(broughtInOver: expected.definition).isEmpty
                if !bringsImages,
                    try Self.replace(
                        changed, on: connection, ifStillAt: expected,
                        keeping: purpose.revision(of: changed, over: expected), auditing: write.audit)
                {
                    return changed
                }
            }
            return try Self.transaction(connection) { () throws(PostgresError) -> StoredCarousel? in
                let rows = try connection.execute(
                    "SELECT \(Self.columns) FROM carousels WHERE serial = $1 FOR UPDATE", [String(key.serial)])
                guard let row = rows.first else { return nil }
                let stored: StoredCarousel
                do throws(StoreError) {
                    stored = try decoded(row)
                } catch {
                    undecodable = error
                    throw PostgresError(
                        sqlState: "", message: "\(error)", during: "reading \(key.name)", brokeConnection: false)
                }
                guard let write = decide(stored) else { return stored }
                let changed = write.carousel
                precondition(changed.key == key, "a change cannot rename a carousel or give it another serial")
                if purpose.isAdmin {
                    missing = try Self.missingImages(
                        changed.definition.libraryImages(broughtInOver: stored.definition), on: connection)
                    guard missing.isEmpty else { return nil }
                }
                if let id = write.applying {
                    // Another replica making it at the same moment waits here, then finds it gone.
                    let claimed = try connection.execute(
                        """
                        WITH claimed AS (DELETE FROM pending WHERE id = $1 AND carousel = $2 RETURNING id)
                        SELECT pg_notify('\(Self.channel)', '\(Self.pendingPayload)') FROM claimed
                        """, [String(id), String(key.serial)])
                    guard !claimed.isEmpty else {
                        notPending = id
                        return nil
                    }
                }
                _ = try Self.replace(
                    changed, on: connection, ifStillAt: stored, keeping: purpose.revision(of: changed, over: stored),
                    auditing: write.audit, published: write.applying != nil)
                return changed
            }
        }
        if let undecodable { throw undecodable }
        guard missing.isEmpty else { throw .missingMedia(missing) }
        if let notPending { throw .notPending(id: notPending) }
        guard let stored else { throw .notFound(name: key.name) }
        definitions.remember(stored.definition, serial: stored.serial, revision: stored.revision)
        return stored
    }

    public func delete(_ key: CarouselKey, expectedRevision: UInt64, by attribution: Attribution)
        throws(StoreError)
    {
        let stored = try on(admin) { connection throws(PostgresError) -> UInt64? in
            try Self.transaction(connection) { () throws(PostgresError) -> UInt64? in
                let rows = try connection.execute(
                    "SELECT revision FROM carousels WHERE serial = $1 FOR UPDATE", [String(key.serial)])
                guard let revision = rows.first?[0].flatMap({ UInt64($0) }) else { return nil }
                guard revision == expectedRevision else { return revision }
                try connection.execute(
                    """
                    WITH deleted AS (DELETE FROM carousels WHERE serial = $1 RETURNING name)
                    SELECT pg_notify('\(Self.channel)', name) FROM deleted
                    """, [String(key.serial)])  // the name alone: gone, nothing to follow but that
                try connection.execute("DELETE FROM screens WHERE carousel = $1", [String(key.serial)])
                try connection.execute("DELETE FROM revisions WHERE carousel = $1", [String(key.serial)])
                try connection.execute("DELETE FROM pending WHERE carousel = $1", [String(key.serial)])
                try Self.append(
                    [AuditEntry(.deleteCarousel, attribution, carousel: key.name, revision: revision)], on: connection)
                return revision
            }
        }
        guard let stored else { throw .notFound(name: key.name) }
        guard stored == expectedRevision else { throw .conflict(name: key.name, revision: stored) }
        definitions.forget(serial: key.serial)
    }

    public func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool {
        try on(admin) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) -> Bool in
                // Replicas starting together on an empty database take turns here; the first seeds.
                try connection.run("SELECT pg_advisory_xact_lock(hashtext('banner-carousel seeding'))")
                guard try connection.run("SELECT 1 FROM carousels LIMIT 1").isEmpty else { return false }
                for definition in definitions {
                    try Self.insert(
                        definition, anchor: anchor(definition), by: attribution, as: .seedCarousel, on: connection)
                }
                return true
            }
        }
    }

    // MARK: Tokens

    /// The payload that tells replicas a token was created or deleted: no carousel's name starts
    /// with `*`.
    static let tokensPayload = "*tokens"

    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        var parameters: [String?] = [
            token.name, token.role.rawValue, token.storedCarousels,
            token.expiresAt.map { String($0.nanosecondsSinceEpoch) }, String(token.createdAt.nanosecondsSinceEpoch),
            token.createdBy, token.digest,
        ]
        let audited = Self.auditing(
            [AuditEntry(.createToken, attribution, target: token.name)], after: "saved", &parameters)
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                WITH saved AS (
                    INSERT INTO tokens (name, role, carousels, expires_at, created_at, created_by, digest)
                    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING RETURNING 1), \(audited)
                SELECT pg_notify('\(Self.channel)', '\(Self.tokensPayload)') FROM saved
                """, parameters)
        }
        return !rows.isEmpty
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                "SELECT name, role, carousels, expires_at, created_at, created_by, digest FROM tokens ORDER BY name")
        }
        return rows.map { row in
            TokenRecord(
                name: row[0] ?? "", role: TokenRole(rawValue: row[1] ?? "") ?? .stats,
                carousels: TokenRecord.carousels(stored: row[2]),
                expiresAt: row[3].flatMap { Int64($0) }.map { Timestamp(nanosecondsSinceEpoch: $0) },
                createdAt: Timestamp(nanosecondsSinceEpoch: row[4].flatMap { Int64($0) } ?? 0), createdBy: row[5] ?? "",
                digest: row[6] ?? "")
        }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        var parameters: [String?] = [name]
        let audited = Self.auditing(
            [AuditEntry(.revokeToken, attribution, target: name)], after: "deleted", &parameters)
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                WITH deleted AS (DELETE FROM tokens WHERE name = $1 RETURNING 1), \(audited)
                SELECT pg_notify('\(Self.channel)', '\(Self.tokensPayload)') FROM deleted
                """, parameters)
        }
        return !rows.isEmpty
    }

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
            try connection.execute("SELECT \(PendingChange.columns) FROM pending ORDER BY at, id")
        }
        return rows.map { row in PendingChange(integer: { row[$0].flatMap { Int64($0) } }, text: { row[$0] }) }
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
            try connection.execute("SELECT id, url, events, secret, created_at, created_by FROM webhooks ORDER BY id")
        }
        return rows.map { row in
            WebhookRecord(
                id: row[0].flatMap { Int64($0) } ?? 0, url: row[1] ?? "",
                events: WebhookRecord.events(stored: row[2] ?? ""), secret: row[3] ?? "",
                createdAt: Timestamp(nanosecondsSinceEpoch: row[4].flatMap { Int64($0) } ?? 0),
                createdBy: row[5] ?? "")
        }
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
    private static func queue(_ events: [QueuedEvent], on connection: PostgresConnection) throws(PostgresError) {
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
                    last_error = $4, delivered_at = $5, next_attempt_at = $6, claimed_until = NULL
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
            DeliveryRecord(integer: { row[$0].flatMap { Int64($0) } }, text: { row[$0] })
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

    // MARK: Audit log

    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT seq, at, actor, action, carousel, target, revision, request_id FROM audit
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
        return rows.map { row in
            let integer = { (column: Int) in row[column].flatMap { Int64($0) } }
            return AuditRecord(
                seq: integer(0) ?? 0, at: integer(1) ?? 0, actor: row[2] ?? "", action: row[3] ?? "",
                carousel: row[4], target: row[5], revision: integer(6), requestID: row[7])
        }
    }

    private static let auditColumns = "at, actor, action, carousel, target, revision, request_id"

    /// `VALUES` rows of `entries`, their values appended to `parameters`.
    private static func auditValues(_ entries: [AuditEntry], _ parameters: inout [String?]) -> String {
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
    private static func auditing(
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
    private static func queueing(_ events: [QueuedEvent], after source: String?, _ parameters: inout [String?])
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
    private static func append(_ entries: [AuditEntry], on connection: PostgresConnection) throws(PostgresError) {
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
            try connection.execute(
                "SELECT revision, at, actor, summary FROM revisions WHERE carousel = $1 ORDER BY revision DESC",
                [String(serial)])
        }
        return rows.map { row in
            RevisionRecord(
                revision: row[0].flatMap { UInt64($0) } ?? 0,
                at: Timestamp(nanosecondsSinceEpoch: row[1].flatMap { Int64($0) } ?? 0), actor: row[2] ?? "",
                summary: row[3] ?? "")
        }
    }

    public func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                "SELECT at, actor, summary, definition FROM revisions WHERE carousel = $1 AND revision = $2",
                [String(serial), String(revision)])
        }
        guard let row = rows.first else { return nil }
        let definition = try DecodedDefinitions.decode(
            row[3] ?? "", of: "revision \(revision) of carousel \(serial)", store: description)
        return Revision(
            record: RevisionRecord(
                revision: revision, at: Timestamp(nanosecondsSinceEpoch: row[0].flatMap { Int64($0) } ?? 0),
                actor: row[1] ?? "", summary: row[2] ?? ""),
            definition: definition)
    }

    // MARK: Media

    /// Bytes travel as bytea's hexadecimal text (`\\x…`): libpq's text protocol, as every other
    /// value here, at twice the size on the wire — paid once per upload and once per cache miss.
    public func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) -> Bool in
                // Two replicas storing the same upload: the second waits for the first, then inserts nothing.
                let inserted = try connection.execute(
                    """
                    INSERT INTO media (id, type, width, height, created_at) VALUES ($1, $2, $3, $4, $5)
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """,
                    [
                        media.id, media.type, String(media.width), String(media.height),
                        String(media.createdAt.nanosecondsSinceEpoch),
                    ])
                guard !inserted.isEmpty else { return false }
                let files = [(0, media.original)] + media.variants.map { ($0.width, $0.webp) }
                for (width, bytes) in files {
                    try connection.execute(
                        "INSERT INTO media_files (media, width, bytes) VALUES ($1, $2, $3::bytea)",
                        [media.id, String(width), ByteaText.encode(bytes)])
                }
                try Self.append([AuditEntry(.uploadMedia, attribution, target: media.id)], on: connection)
                return true
            }
        }
    }

    public func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT m.id, m.type, m.width, m.height, m.created_at, f.width, length(f.bytes)
                FROM media m JOIN media_files f ON f.media = m.id WHERE $1::text IS NULL OR m.id = $1
                ORDER BY m.created_at, m.id, f.width
                """, [id])
        }
        return Store.mediaRecords(
            fromRows: rows.map { row in
                let number = { (column: Int) in row[column].flatMap { Int($0) } ?? 0 }
                return (
                    row[0] ?? "", row[1] ?? "", number(2), number(3),
                    Timestamp(nanosecondsSinceEpoch: Int64(number(4))), number(5), number(6)
                )
            })
    }

    public func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                "SELECT bytes FROM media_files WHERE media = $1 AND width = $2", [id, String(file.storedWidth)])
        }
        guard let text = rows.first?[0] else { return nil }
        guard let bytes = ByteaText.decode(text) else {
            throw .unavailable("media \(id): the database answered bytes in a form this build cannot read")
        }
        return bytes
    }

    public func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        var undecodable: StoreError?
        let deletion = try on(admin) { connection throws(PostgresError) -> MediaDeletion in
            try Self.transaction(connection) { () throws(PostgresError) -> MediaDeletion in
                // The image's row locked first: a write bringing the image in (which locks it
                // FOR SHARE) has committed, and its definition is read below (each statement
                // sees what was committed before it), or waits for this one, and then finds the
                // image gone.
                guard !(try connection.execute("SELECT 1 FROM media WHERE id = $1 FOR UPDATE", [id])).isEmpty else {
                    return .notFound
                }
                var uses: [MediaUse] = []
                // Only a definition whose text has the id in it can show the image.
                let rows = try connection.execute(
                    "SELECT \(Self.columns) FROM carousels WHERE strpos(definition, $1) > 0 ORDER BY name", [id])
                for row in rows {
                    do throws(StoreError) {
                        uses += try decoded(row).definition.uses(ofImage: id)
                    } catch {
                        undecodable = error
                        throw PostgresError(
                            sqlState: "", message: "\(error)", during: "reading \(row[1] ?? "")", brokeConnection: false
                        )
                    }
                }
                guard uses.isEmpty else { return .inUse(uses) }
                try connection.execute("DELETE FROM media WHERE id = $1", [id])  // its files by cascade
                try Self.append([AuditEntry(.deleteMedia, attribution, target: id)], on: connection)
                return .deleted
            }
        }
        if let undecodable { throw undecodable }
        return deletion
    }

    /// Those of the images `ids` that are not stored; the others locked (`FOR SHARE`) until the
    /// transaction ends, so that no deletion of them commits before the write asking does.
    private static func missingImages(_ ids: [String], on connection: PostgresConnection) throws(PostgresError)
        -> [String]
    {
        guard !ids.isEmpty else { return [] }
        // Ids are 64 hexadecimal digits (MediaReference.isID): an array literal needs no quoting.
        let rows = try connection.execute(
            "SELECT id FROM media WHERE id = ANY($1::text[]) FOR SHARE", ["{" + ids.joined(separator: ",") + "}"])
        let found = Set(rows.compactMap { $0.first ?? nil })
        return ids.filter { !found.contains($0) }
    }

    public func importDefinitions(
        _ imported: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor, by attribution: Attribution
    ) throws(StoreError) {
        try on(admin) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                for definition in imported {
                    let rows = try connection.execute(
                        "SELECT \(Self.columns) FROM carousels WHERE name = $1 FOR UPDATE", [definition.name])
                    let current = rows.first.flatMap { try? decoded($0) }
                    let newAnchor = anchor(definition, current)
                    if let row = rows.first, let serial = row[0].flatMap({ Int64($0) }) {
                        let revision = (row[3].flatMap { UInt64($0) } ?? 0) + 1
                        _ = try Self.replace(
                            StoredCarousel(
                                definition: definition, revision: revision, anchor: newAnchor, serial: serial),
                            on: connection, ifStillAt: nil,
                            keeping: Revision(revision, of: definition, over: current?.definition, attribution),
                            auditing: [
                                AuditEntry(.importCarousel, attribution, carousel: definition.name, revision: revision)
                            ])
                    } else {
                        try Self.insert(
                            definition, anchor: newAnchor, by: attribution, as: .importCarousel, on: connection)
                    }
                }
            }
        }
    }

    // MARK: Proof of play

    public func record(_ batch: StatsBatch) throws(StoreError) {
        guard !batch.isEmpty else { return }
        // Rows in one order on every replica: two flushes of the same rows wait for each other
        // rather than deadlock.
        let plays = batch.plays.sorted {
            ($0.carousel, AudienceKeyColumn.text($0.audience), $0.startedAt) < (
                $1.carousel, AudienceKeyColumn.text($1.audience), $1.startedAt
            )
        }
        let identifiedViews = batch.identifiedViews.sorted { ($0.carousel, $0.id) < ($1.carousel, $1.id) }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                // A view whose id is new counts; a repeat (from any replica: the insert waits for
                // another transaction inserting the same id) inserts nothing and returns no row.
                var counts = batch.engagement
                for view in identifiedViews {
                    let inserted = try connection.execute(
                        """
                        INSERT INTO view_reports (carousel, id, reported_at) VALUES ($1, $2, $3)
                        ON CONFLICT (carousel, id) DO NOTHING RETURNING 1
                        """, [String(view.carousel), view.id, String(view.reportedAt.nanosecondsSinceEpoch)])
                    if !inserted.isEmpty {
                        counts.append(view.count)
                    }
                }
                if let cutoff = batch.forgetReportsBefore {
                    _ = try connection.execute(
                        "DELETE FROM view_reports WHERE reported_at < $1", [String(cutoff.nanosecondsSinceEpoch)])
                }
                let engagement = EngagementCount.added(counts).sorted {
                    ($0.carousel, AudienceKeyColumn.text($0.audience), $0.quarter, $0.banner)
                        < ($1.carousel, AudienceKeyColumn.text($1.audience), $1.quarter, $1.banner)
                }
                for play in plays {
                    try connection.execute(
                        """
                        INSERT INTO plays (carousel, audience, started_at, banner, last_shown_at)
                        VALUES ($1, $2, $3, $4, $5)
                        ON CONFLICT (carousel, audience, started_at) DO UPDATE SET
                            last_shown_at = GREATEST(plays.last_shown_at, excluded.last_shown_at)
                        """,
                        [
                            String(play.carousel), AudienceKeyColumn.text(play.audience),
                            String(play.startedAt.nanosecondsSinceEpoch),
                            play.banner, String(play.lastShownAt.nanosecondsSinceEpoch),
                        ])
                }
                for count in engagement {
                    try connection.execute(
                        """
                        INSERT INTO engagement (carousel, audience, quarter, banner, views, clicks)
                        VALUES ($1, $2, $3, $4, $5, $6)
                        ON CONFLICT (carousel, audience, quarter, banner) DO UPDATE SET
                            views = engagement.views + excluded.views, clicks = engagement.clicks + excluded.clicks
                        """,
                        [
                            String(count.carousel), AudienceKeyColumn.text(count.audience), String(count.quarter),
                            count.banner,
                            String(count.views), String(count.clicks),
                        ])
                }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try on(admin) { connection throws(PostgresError) in
            let span = [
                String(serial), AudienceKeyColumn.text(audience), String(from.nanosecondsSinceEpoch),
                String(to.nanosecondsSinceEpoch),
            ]
            let plays = try connection.execute(
                """
                SELECT carousel, audience, banner, started_at, last_shown_at FROM plays
                WHERE carousel = $1 AND audience = $2 AND last_shown_at >= $3 AND started_at < $4
                ORDER BY started_at
                """, span)
            let counts = try connection.execute(
                """
                SELECT carousel, banner, quarter, views, clicks FROM engagement
                WHERE carousel = $1 AND audience = $2 AND quarter * 1000000000 >= $3 AND quarter * 1000000000 < $4
                ORDER BY quarter, banner
                """, span)
            return StatsRecords(
                plays: plays.map(Self.play),
                engagement: counts.map { row in
                    let integer = { (column: Int) in row[column].flatMap { Int64($0) } ?? 0 }
                    return EngagementCount(
                        carousel: integer(0), audience: audience, banner: row[1] ?? "", quarter: integer(2),
                        views: integer(3), clicks: integer(4))
                })
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT carousel, audience, banner, started_at, last_shown_at FROM plays
                WHERE carousel = $1 AND audience = $2 ORDER BY started_at DESC LIMIT 1
                """, [String(serial), AudienceKeyColumn.text(audience)]
            ).first.map(Self.play)
        }
    }

    /// A row of `carousel, audience, banner, started_at, last_shown_at`.
    private static func play(_ row: [String?]) -> PlayRecord {
        let integer = { (column: Int) in row[column].flatMap { Int64($0) } ?? 0 }
        let startedAt = Timestamp(nanosecondsSinceEpoch: integer(3))
        return PlayRecord(
            carousel: integer(0), audience: AudienceKeyColumn.audience(row[1]), banner: row[2] ?? "",
            startedAt: startedAt, shown: Timestamp(nanosecondsSinceEpoch: integer(4)) - startedAt)
    }

    // MARK: The fleet

    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        guard !sightings.isEmpty else { return }
        // Rows in one order on every replica: two replicas' batches wait for each other rather
        // than deadlock.
        let sightings = sightings.sorted {
            ($0.key.carousel, $0.key.id.rawValue) < ($1.key.carousel, $1.key.id.rawValue)
        }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                for sighting in sightings {
                    let key = [String(sighting.key.carousel), sighting.key.id.rawValue]
                    // `ScreenSighting.merged(into:timeout:)`, in SQL.
                    try connection.execute(
                        """
                        INSERT INTO screens AS old (carousel, id, last_seen, heard_since, via, user_agent, audience)
                        SELECT $1, $2, $3, $3, $4, $5, $7 WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = $1)
                        ON CONFLICT (carousel, id) DO UPDATE SET
                            heard_since = CASE WHEN excluded.last_seen - old.last_seen > $6
                                THEN excluded.last_seen ELSE old.heard_since END,
                            via = CASE WHEN excluded.last_seen >= old.last_seen THEN excluded.via ELSE old.via END,
                            user_agent = CASE WHEN excluded.last_seen >= old.last_seen
                                THEN excluded.user_agent ELSE old.user_agent END,
                            audience = CASE WHEN excluded.last_seen >= old.last_seen
                                THEN excluded.audience ELSE old.audience END,
                            last_seen = GREATEST(old.last_seen, excluded.last_seen)
                        """,
                        key + [
                            String(sighting.heardAt.nanosecondsSinceEpoch), sighting.via.rawValue, sighting.userAgent,
                            String(timeout.nanoseconds), sighting.audience,
                        ])
                    guard let receipt = sighting.receipt else { continue }
                    try connection.execute(
                        """
                        UPDATE screens SET banner = $3, version = $4, shown_at = $5, lateness = $6,
                            verdict_since = CASE WHEN shown_at IS NOT NULL AND out_of_step IS NOT DISTINCT FROM $7
                                THEN verdict_since ELSE $8 END,
                            out_of_step = $7, offset_ms = $9, rtt_ms = $10
                        WHERE carousel = $1 AND id = $2 AND (shown_at IS NULL OR shown_at <= $5)
                        """,
                        key + [
                            receipt.banner, String(receipt.version), String(receipt.shownAt.nanosecondsSinceEpoch),
                            receipt.lateness.map { String($0.nanoseconds) }, receipt.outOfStep?.rawValue,
                            String(receipt.verdictSince.nanosecondsSinceEpoch), receipt.offsetMs.map { String($0) },
                            receipt.rttMs.map { String($0) },
                        ])
                }
            }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        try on(admin) { connection throws(PostgresError) in
            try connection.execute("SELECT \(ScreenRecord.columns) FROM screens").compactMap { row in
                ScreenRecord(integer: { row[$0].flatMap { Int64($0) } }, text: { row[$0] })
            }
        }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                "DELETE FROM screens WHERE last_seen < $1 RETURNING 1", [String(cutoff.nanosecondsSinceEpoch)]
            ).count
        }
    }

    public func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void) {
        listener.start { [status, admin, commands] event in
            switch event {
            case .reachable:
                status.withLock { $0.unreachable = nil }
                // Back: the next write connects at once rather than wait out its pause.
                for slot in [admin, commands] { slot.withLock { $0.lastFailure = nil } }
                onChange(.everything)
            case .unreachable(let reason):
                status.withLock { $0.unreachable = reason }
                onChange(.unreachable(reason))
            case .changed(let payload):
                onChange(Self.change(from: payload))
            }
        }
    }

    public func close() {
        listener.stop()
        admin.withLock { $0.connection = nil }
        commands.withLock { $0.connection = nil }
    }

    /// A notification's payload as a change: `name`, or `name serial revision position
    /// playing_since paused_until version changed_at turn` (see `note`).
    static func change(from payload: String) -> StoreChange {
        if payload == tokensPayload { return .tokens }
        if payload == pendingPayload { return .pending }
        let fields = payload.split(separator: " ").map(String.init)
        guard fields.count == 9, let serial = Int64(fields[1]), let revision = UInt64(fields[2]),
            let version = Int64(fields[6]), let changedAt = Int64(fields[7])
        else { return .carousel(name: fields.first ?? payload) }
        let integer = { (text: String) in text == "-" ? nil : Int64(text) }
        let anchor = AnchorColumns(
            position: integer(fields[3]), playingSince: integer(fields[4]), pausedUntil: integer(fields[5]),
            version: version, changedAt: changedAt, takeover: nil, turn: integer(fields[8]), audiences: nil
        ).anchor
        return .carousel(name: fields[0], note: ChangeNote(serial: serial, revision: revision, anchor: anchor))
    }

    // MARK: Connections

    /// Runs `body` on the connection of `slot`, alone on it, connecting first when it has none
    /// (or a broken one); PostgreSQL's errors become what an operator reads.
    private func on<Result>(
        _ slot: Lock<Slot>, _ body: (PostgresConnection) throws(PostgresError) -> Result
    ) throws(StoreError) -> Result {
        try slot.withLock { slot throws(StoreError) in
            let connection = try connected(&slot)
            do throws(PostgresError) {
                return try body(connection)
            } catch {
                if !connection.isOpen { slot.connection = nil }
                throw failure(error)
            }
        }
    }

    private func connected(_ slot: inout Slot) throws(StoreError) -> PostgresConnection {
        if let connection = slot.connection, connection.isOpen { return connection }
        slot.connection = nil
        let now = ContinuousClock.now
        if let last = slot.lastAttempt, now - last < Self.retryPause, let failure = slot.lastFailure {
            throw failure  // tried a moment ago: fail fast rather than wait again
        }
        slot.lastAttempt = now
        do {
            let connection = try PostgresConnection(parameters)
            let identity = try Self.migrate(connection, describe: description)
            status.withLock { $0.identity = identity }
            slot.connection = connection
            slot.lastFailure = nil
            return connection
        } catch {
            let failure: StoreError =
                switch error {
                case let error as PostgresError: self.failure(error)
                case let error as StoreError: error
                default: .unavailable("\(description): \(error)")
                }
            slot.lastFailure = failure
            throw failure
        }
    }

    /// What an operator reads for a failed call.
    private func failure(_ error: PostgresError) -> StoreError {
        guard error.isTransient else { return .unavailable("\(description) failed: \(error)") }
        return .unavailable(
            "\(description) cannot be reached (\(error.message)); banner-server keeps trying: "
                + "check that the server is up and reachable")
    }

    private static func transaction<Result>(
        _ connection: PostgresConnection, _ body: () throws(PostgresError) -> Result
    ) throws(PostgresError) -> Result {
        try connection.run("BEGIN")
        do {
            let result = try body()
            try connection.run("COMMIT")
            return result
        } catch {
            if connection.isOpen { _ = try? connection.run("ROLLBACK") }
            throw error
        }
    }

    /// `uri` without its password, for logs and messages: `postgres://user@host:port/db`.
    public static func redacted(_ uri: String) -> String {
        (try? parse(uri)) ?? "postgres://… (a malformed URI)"
    }

    /// `postgres://user@host:port/db` from a URI, the password left out; `.unusable` when libpq
    /// cannot parse it.
    private static func parse(_ uri: String) throws(StoreError) -> String {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &error) else {
            let message = error.map { String(cString: $0).split(whereSeparator: \.isNewline).joined(separator: " ") }
            error.map { PQfreemem($0) }
            throw .unusable(
                "the PostgreSQL URI is malformed (\(message ?? "out of memory")); "
                    + "give --store postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        defer { PQconninfoFree(options) }
        var found: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { found[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let user = found["user"].map { "\($0)@" } ?? ""
        let host = found["host"] ?? found["hostaddr"] ?? "localhost"
        let port = found["port"].map { ":\($0)" } ?? ""
        return "postgres://\(user)\(host)\(port)/\(found["dbname"] ?? "")"
    }

    // MARK: Schema

    /// Each step of the schema, oldest first; a step is never edited once released.
    private static let migrations: [String] = [
        """
        CREATE TABLE banner_store (key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE carousels (
            serial bigserial PRIMARY KEY,
            name text NOT NULL UNIQUE,
            definition text NOT NULL,
            revision bigint NOT NULL,
            position bigint,
            playing_since bigint,
            paused_until bigint,
            version bigint NOT NULL
        );
        """,
        // Schedules and takeovers (docs/SCHEDULES.md): when the anchor was taken, and the takeover.
        """
        ALTER TABLE carousels ADD COLUMN changed_at bigint NOT NULL DEFAULT 0, ADD COLUMN takeover text;
        """,
        // Proof of play (docs/STATS.md): plays by start, views and clicks by quarter hour.
        """
        CREATE TABLE plays (
            carousel bigint NOT NULL,
            started_at bigint NOT NULL,
            banner text NOT NULL,
            last_shown_at bigint NOT NULL,
            PRIMARY KEY (carousel, started_at)
        );
        CREATE INDEX plays_by_last_shown ON plays (carousel, last_shown_at);
        CREATE TABLE engagement (
            carousel bigint NOT NULL,
            quarter bigint NOT NULL,
            banner text NOT NULL,
            views bigint NOT NULL,
            clicks bigint NOT NULL,
            PRIMARY KEY (carousel, quarter, banner)
        );
        """,
        // The fleet (docs/SCREENS.md): each screen's presence and latest receipt.
        """
        CREATE TABLE screens (
            carousel bigint NOT NULL,
            id text NOT NULL,
            last_seen bigint NOT NULL,
            heard_since bigint NOT NULL,
            via text NOT NULL,
            user_agent text NOT NULL,
            banner text,
            version bigint,
            shown_at bigint,
            lateness bigint,
            out_of_step text,
            verdict_since bigint,
            offset_ms bigint,
            rtt_ms bigint,
            PRIMARY KEY (carousel, id)
        );
        CREATE INDEX screens_by_last_seen ON screens (last_seen);
        """,
        // Views reported with ids (docs/STATS.md): each id kept 48 hours, a repeat not counted.
        """
        CREATE TABLE view_reports (
            carousel bigint NOT NULL,
            id text NOT NULL,
            reported_at bigint NOT NULL,
            PRIMARY KEY (carousel, id)
        );
        CREATE INDEX view_reports_by_age ON view_reports (reported_at);
        """,
        // The media library (docs/MEDIA.md): each image, and its files (width 0: the original).
        """
        CREATE TABLE media (
            id text PRIMARY KEY,
            type text NOT NULL,
            width bigint NOT NULL,
            height bigint NOT NULL,
            created_at bigint NOT NULL
        );
        CREATE TABLE media_files (
            media text NOT NULL REFERENCES media (id) ON DELETE CASCADE,
            width bigint NOT NULL,
            bytes bytea NOT NULL,
            PRIMARY KEY (media, width)
        );
        """,
        // History (docs/HISTORY.md): each carousel's revisions; the definitions stored before
        // it are kept as their current revision, by no one known.
        """
        CREATE TABLE revisions (
            carousel bigint NOT NULL,
            revision bigint NOT NULL,
            at bigint NOT NULL,
            actor text NOT NULL,
            summary text NOT NULL,
            definition text NOT NULL,
            PRIMARY KEY (carousel, revision)
        );
        INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
        SELECT serial, revision, (extract(epoch FROM clock_timestamp()) * 1000000000)::bigint, 'unrecorded',
            'as stored when history began', definition
        FROM carousels;
        """,
        // Named tokens (docs/TOKENS.md): never a secret, only its SHA-256.
        """
        CREATE TABLE tokens (
            name text PRIMARY KEY,
            role text NOT NULL,
            carousels text,
            expires_at bigint,
            created_at bigint NOT NULL,
            created_by text NOT NULL,
            digest text NOT NULL UNIQUE
        );
        """,
        // The audit log (docs/AUDIT.md): appended in each write's transaction, never changed.
        """
        CREATE TABLE audit (
            seq bigserial PRIMARY KEY,
            at bigint NOT NULL,
            actor text NOT NULL,
            action text NOT NULL,
            carousel text,
            target text,
            revision bigint,
            request_id text
        );
        CREATE INDEX audit_by_at ON audit (at);
        """,
        // Scheduled changes (docs/SCHEDULED.md): each admin request to make at its time.
        """
        CREATE TABLE pending (
            id bigserial PRIMARY KEY,
            carousel bigint NOT NULL,
            at bigint NOT NULL,
            method text NOT NULL,
            path text NOT NULL,
            body text NOT NULL,
            if_match text,
            actor text NOT NULL,
            request_id text,
            created_at bigint NOT NULL
        );
        CREATE INDEX pending_by_carousel ON pending (carousel);
        """,
        // Webhooks (docs/WEBHOOKS.md): the secret kept as given, to sign each delivery.
        """
        CREATE TABLE webhooks (
            id bigserial PRIMARY KEY,
            url text NOT NULL,
            events text NOT NULL,
            secret text NOT NULL,
            created_at bigint NOT NULL,
            created_by text NOT NULL
        );
        """,
        // Webhook deliveries (docs/WEBHOOKS.md): one row per event and webhook, queued in the
        // transaction of what caused it; due while next_attempt_at is set.
        """
        CREATE TABLE deliveries (
            id bigserial PRIMARY KEY,
            webhook bigint NOT NULL,
            event text NOT NULL,
            type text NOT NULL,
            body text NOT NULL,
            created_at bigint NOT NULL,
            attempts integer NOT NULL DEFAULT 0,
            next_attempt_at bigint,
            claimed_until bigint,
            last_attempt_at bigint,
            last_status integer,
            last_error text,
            delivered_at bigint,
            UNIQUE (webhook, event)
        );
        CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
        """,
        // The turn in a weighted cycle (docs/WEIGHTS.md); NULL: the banner's first turn.
        "ALTER TABLE carousels ADD COLUMN turn bigint;",
        // Each audience's anchor (docs/AUDIENCES.md), JSON; NULL: no audiences.
        "ALTER TABLE carousels ADD COLUMN audiences text;",
        // Audiences' screens (docs/AUDIENCES.md): plays and counts of each audience's screens apart
        // ('' for screens of no audience, which every row before was), and a screen's audience.
        """
        ALTER TABLE plays ADD COLUMN audience text NOT NULL DEFAULT '';
        ALTER TABLE plays DROP CONSTRAINT plays_pkey, ADD PRIMARY KEY (carousel, audience, started_at);
        DROP INDEX plays_by_last_shown;
        CREATE INDEX plays_by_last_shown ON plays (carousel, audience, last_shown_at);
        ALTER TABLE engagement ADD COLUMN audience text NOT NULL DEFAULT '';
        ALTER TABLE engagement DROP CONSTRAINT engagement_pkey, ADD PRIMARY KEY (carousel, audience, quarter, banner);
        ALTER TABLE screens ADD COLUMN audience text;
        """,
    ]

    /// Brings the database to `schemaVersion`, in one transaction under an advisory lock (so that
    /// replicas starting together migrate once); returns its identity.
    private static func migrate(_ connection: PostgresConnection, describe: String) throws -> String {
        try transaction(connection) { () throws(PostgresError) in
            try connection.run("SELECT pg_advisory_xact_lock(hashtext('banner-carousel migrations'))")
            let exists = try connection.run("SELECT to_regclass('banner_store') IS NOT NULL")
            var found = 0
            if exists.first?[0] == "t" {
                let rows = try connection.run("SELECT value FROM banner_store WHERE key = 'schema_version'")
                found = rows.first?[0].flatMap { Int($0) } ?? 0
            }
            guard found < schemaVersion else { return }
            for step in migrations[found...] { try connection.run(step) }
            if found == 0 {
                try connection.execute(
                    "INSERT INTO banner_store (key, value) VALUES ('identity', $1)",
                    ["p" + String(UInt64.random(in: .min ... .max), radix: 36)])
            }
            try connection.execute(
                """
                INSERT INTO banner_store (key, value) VALUES ('schema_version', $1)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value
                """, [String(schemaVersion)])
        }
        let rows = try connection.run(
            "SELECT key, value FROM banner_store WHERE key IN ('identity', 'schema_version')")
        let values = Dictionary(uniqueKeysWithValues: rows.compactMap { row in row[0].map { ($0, row[1] ?? "") } })
        let version = values["schema_version"].flatMap { Int($0) } ?? 0
        guard version == schemaVersion else {
            throw StoreError.unusable(
                "\(describe) has schema version \(version), newer than this banner-server's \(schemaVersion): "
                    + "run a banner-server at least as new as the one that wrote it, or give another --store")
        }
        guard let identity = values["identity"] else {
            throw StoreError.unusable("\(describe) has no identity row; it was not written by banner-server")
        }
        return identity
    }

    // MARK: Rows

    private static let columns = "serial, name, definition, revision, " + AnchorColumns.names.joined(separator: ", ")

    /// A new carousel's row, kept as its first revision and in the audit log as `action`.
    private static func insert(
        _ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution, as action: AuditAction,
        on connection: PostgresConnection
    ) throws(PostgresError) {
        var parameters = [definition.name, definition.storedText] + Self.parameters(AnchorColumns(anchor))
        let kept = keeping(Revision(of: definition, over: nil, attribution), of: "created", &parameters)
        let audited = auditing(
            [AuditEntry(action, attribution, carousel: definition.name, revision: 1)], after: "created", &parameters)
        try connection.execute(
            """
            WITH created AS (\(insertRow) RETURNING *), \(kept), \(audited)
            SELECT \(note) FROM created
            """, parameters)
    }

    /// The common table expressions that keep `revision` of the carousel row `source` (a CTE
    /// written before them, `RETURNING *`) in its history, and prune what `RevisionRetention`
    /// lets go: nothing when `source` wrote no row. Their values are appended to `parameters`.
    private static func keeping(_ revision: Revision, of source: String, _ parameters: inout [String?]) -> String {
        let record = revision.record
        let pruning = RevisionRetention.pruning(after: record)
        let first = parameters.count + 1
        parameters += [
            String(record.at.nanosecondsSinceEpoch), record.actor, record.summary,
            pruning.map { String($0.through) }, pruning.map { String($0.before.nanosecondsSinceEpoch) },
        ]
        return """
            kept AS (
                INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
                SELECT serial, revision, $\(first)::bigint, $\(first + 1)::text, $\(first + 2)::text, definition
                FROM \(source)),
            pruned AS (
                DELETE FROM revisions r USING \(source) c
                WHERE r.carousel = c.serial AND r.revision <= $\(first + 3)::bigint AND r.at < $\(first + 4)::bigint)
            """
    }

    /// A new carousel's row: $1 its name, $2 its definition, then the anchor's columns.
    private static let insertRow = """
        INSERT INTO carousels (name, definition, revision, \(AnchorColumns.names.joined(separator: ", ")))
        VALUES ($1, $2, 1, \((3..<3 + AnchorColumns.names.count).map { "$\($0)" }.joined(separator: ", ")))
        """

    /// The notification of a change: the name, then what a replica needs to follow a command
    /// without reading the row (`ChangeNote`): serial, revision, and the anchor's integer columns,
    /// `-` for NULL. Under a takeover or with audiences only the name (its banner, or 64
    /// audiences' anchors, would not fit a notification's 8000 bytes): replicas read the row.
    private static let note = """
        pg_notify('\(channel)', CASE WHEN takeover IS NULL AND audiences IS NULL THEN concat_ws(' ', name, serial, revision,
            coalesce(position::text, '-'), coalesce(playing_since::text, '-'), coalesce(paused_until::text, '-'),
            version, changed_at, coalesce(turn::text, '-')) ELSE name END)
        """

    /// Writes `stored` over its row; with `previous`, only if the row is still exactly that (its
    /// revision and anchor), and the definition only when the revision moves (a command leaves
    /// it alone); with `revision`, kept in the history, and `entries` appended to the audit log,
    /// in the same statement. Returns whether the row was written.
    private static func replace(
        _ stored: StoredCarousel, on connection: PostgresConnection, ifStillAt previous: StoredCarousel?,
        keeping revision: Revision?, auditing entries: [AuditEntry], published: Bool = false
    ) throws(PostgresError) -> Bool {
        var parameters =
            [String(stored.serial), String(stored.revision)] + Self.parameters(AnchorColumns(stored.anchor))
        var assignments =
            "revision = $2, " + AnchorColumns.names.enumerated().map { "\($1) = $\($0 + 3)" }.joined(separator: ", ")
        if stored.revision != previous?.revision {
            parameters.append(stored.definition.storedText)
            assignments += ", definition = $\(parameters.count)"
        }
        var condition = "serial = $1"
        if let previous {
            let first = parameters.count + 1
            let columns = AnchorColumns(previous.anchor)
            parameters += [String(previous.revision)] + Self.parameters(columns)
            condition += " AND revision = $\(first)"
            for (offset, (name, value)) in zip(AnchorColumns.names, columns.values).enumerated() {
                let type = if case .text = value { "text" } else { "bigint" }
                condition += " AND \(name) IS NOT DISTINCT FROM $\(first + 1 + offset)::\(type)"
            }
        }
        let kept = revision.map { ", " + keeping($0, of: "changed", &parameters) } ?? ""
        let audited =
            entries.isEmpty ? "" : ", " + auditing(entries, published: published, after: "changed", &parameters)
        let rows = try connection.execute(
            """
            WITH changed AS (UPDATE carousels SET \(assignments) WHERE \(condition) RETURNING *)\(kept)\(audited)
            SELECT \(note) FROM changed
            """, parameters)
        return rows.count == 1
    }

    /// An anchor's columns as statement parameters (text; nil is NULL).
    private static func parameters(_ columns: AnchorColumns) -> [String?] {
        columns.values.map { value in
            switch value {
            case .integer(let integer): integer.map { String($0) }
            case .text(let text): text
            }
        }
    }

    /// A row of `columns` as a stored carousel; its definition decoded once per revision.
    private func decoded(_ row: [String?], keeping: Bool = true) throws(StoreError) -> StoredCarousel {
        let serial = row[0].flatMap { Int64($0) } ?? 0
        let revision = row[3].flatMap { UInt64($0) } ?? 0
        let definition = try definitions.definition(
            serial: serial, revision: revision, name: row[1] ?? "", text: row[2] ?? "", store: description,
            keeping: keeping)
        let integer = { (column: Int) in row[column].flatMap { Int64($0) } }
        let anchor = AnchorColumns(
            position: integer(4), playingSince: integer(5), pausedUntil: integer(6), version: integer(7) ?? 1,
            changedAt: integer(8) ?? 0, takeover: row[9], turn: integer(10), audiences: row[11]
        ).anchor
        return StoredCarousel(definition: definition, revision: revision, anchor: anchor, serial: serial)
    }
}
