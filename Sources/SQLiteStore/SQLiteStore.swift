import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Locking
import Store
import TimeZones

/// Carousels in a SQLite file (docs/STORE.md): WAL mode, one process at a time (`StoreLockFile`),
/// and one connection per purpose: admin changes on a connection that syncs every commit to
/// disk (`synchronous=FULL`), commands on one that leaves syncing to the WAL checkpoints
/// (`synchronous=NORMAL`: a commit survives the process being killed, not a power loss).
public final class SQLiteStore: CarouselStore {
    /// The schema this build writes; `migrations[n]` takes a store from version n to n + 1.
    public static let schemaVersion = migrations.count
    /// How long a write waits, by default, for a lock held by another connection before the
    /// store is reported unavailable.
    public static let defaultBusyTimeout: Duration = .seconds(5)

    public let path: String
    public let identity: String
    /// Opened read-only (the file's permissions): reads are served, every write refused.
    public let isReadOnly: Bool
    let busyTimeout: Duration
    public var description: String { "SQLite store \(path)" }

    private let lockFile: StoreLockFile
    private let definitions = DecodedDefinitions()
    /// Admin changes, loading, import; each commit synced.
    private let admin: Lock<SQLiteConnection>
    /// Commands' anchors; each commit in the WAL, synced at checkpoints.
    private let commands: Lock<SQLiteConnection>

    /// Opens the store at `path`, creating it (and its folder) when missing, and migrates it.
    /// Throws `.unusable` when another process holds it, its schema is newer than this build's,
    /// or it is not a store; `.unavailable` when it cannot be read or written now.
    public init(path: String, busyTimeout: Duration = defaultBusyTimeout) throws(StoreError) {
        self.path = path
        self.busyTimeout = busyTimeout
        try Self.createFolder(of: path)
        do {
            lockFile = try StoreLockFile(storePath: path)
        } catch {
            throw .unusable(error.message)
        }
        do {
            let admin = try Self.connect(path, synchronous: "FULL", busyTimeout: busyTimeout)
            identity = try Self.migrate(admin, path: path)
            isReadOnly = admin.isReadOnly
            self.admin = Lock(admin)
            commands = Lock(try Self.connect(path, synchronous: "NORMAL", busyTimeout: busyTimeout))
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw Self.failure(error, path: path, busyTimeout: busyTimeout)
        } catch {
            throw .unavailable("\(path): \(error)")
        }
    }

    // MARK: CarouselStore

    public func loadAll() throws(StoreError) -> [StoredCarousel] {
        try on(admin) { connection throws(SQLiteError) in
            defer {
                // Every row was read once, at a start or a reload: the pages it cached are not read
                // again soon (up to 2 MiB, docs/PERFORMANCE.md).
                try? connection.execute("PRAGMA shrink_memory")
            }
            return try Self.read(connection)
        }.map {
            (row) throws(StoreError) in try decoded(row, keeping: false)
        }
    }

    public func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel
    {
        var missing: [String] = []
        let serial = try on(admin) { connection throws(SQLiteError) -> Int64? in
            try connection.transaction { () throws(SQLiteError) -> Int64? in
                let taken = try connection.statement("SELECT 1 FROM carousels WHERE name = ?1").bind(
                    .text(definition.name))
                defer { taken.reset() }
                guard try !taken.step() else { return nil }
                missing = try Self.missingImages(definition.libraryImages(broughtInOver: nil), in: connection)
                guard missing.isEmpty else { return nil }
                return try Self.insert(
                    definition, anchor: anchor, by: attribution, as: .createCarousel, into: connection)
            }
        }
        guard missing.isEmpty else { throw .missingMedia(missing) }
        guard let serial else { throw .duplicate(name: definition.name) }
        return StoredCarousel(definition: definition, revision: 1, anchor: anchor, serial: serial)
    }

    public func load(named name: String) throws(StoreError) -> StoredCarousel? {
        try on(admin) { connection throws(SQLiteError) in try Self.read(connection, name: name).first }.map {
            (row) throws(StoreError) in try decoded(row)
        }
    }

    /// One process owns it: what is stored is read in the transaction anyway, `expected` not needed.
    public func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        // The row is read and decoded inside the transaction, its write lock held; a definition
        // that cannot be decoded ends it (rolled back) with that error.
        var undecodable: StoreError?
        var missing: [String] = []
        var notPending: Int64?
        let connection = purpose.isAdmin ? admin : commands
        let stored = try on(connection) { connection throws(SQLiteError) -> StoredCarousel? in
            try connection.transaction { () throws(SQLiteError) -> StoredCarousel? in
                guard let row = try Self.read(connection, serial: key.serial).first else { return nil }
                let stored: StoredCarousel
                do throws(StoreError) {
                    stored = try decoded(row)
                } catch {
                    undecodable = error
                    throw SQLiteError(code: SQLITE_ABORT, message: "\(error)", during: "reading \(key.name)")
                }
                guard let write = decide(stored) else { return stored }
                let changed = write.carousel
                precondition(changed.key == key, "a change cannot rename a carousel or give it another serial")
                if purpose.isAdmin {
                    missing = try Self.missingImages(
                        changed.definition.libraryImages(broughtInOver: stored.definition), in: connection)
                    guard missing.isEmpty else { return nil }
                }
                if let id = write.applying {
                    try connection.statement("DELETE FROM pending WHERE id = ?1 AND carousel = ?2")
                        .bind(.integer(id), .integer(key.serial)).run()
                    guard connection.changes > 0 else {
                        notPending = id
                        return nil
                    }
                }
                try Self.replace(changed, in: connection)
                if let revision = purpose.revision(of: changed, over: stored) {
                    try Self.keep(revision, of: key.serial, in: connection)
                }
                try Self.append(write.audit, published: write.applying != nil, in: connection)
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
        let stored = try on(admin) { connection throws(SQLiteError) -> UInt64? in
            try connection.transaction { () throws(SQLiteError) -> UInt64? in
                guard let revision = try Self.revision(of: key.serial, in: connection) else { return nil }
                guard revision == expectedRevision else { return revision }
                try connection.statement("DELETE FROM carousels WHERE serial = ?1").bind(.integer(key.serial)).run()
                try connection.statement("DELETE FROM revisions WHERE carousel = ?1").bind(.integer(key.serial)).run()
                try connection.statement("DELETE FROM screens WHERE carousel = ?1").bind(.integer(key.serial)).run()
                try connection.statement("DELETE FROM pending WHERE carousel = ?1").bind(.integer(key.serial)).run()
                try Self.append(
                    [AuditEntry(.deleteCarousel, attribution, carousel: key.name, revision: revision)], in: connection)
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
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                let any = try connection.statement("SELECT 1 FROM carousels LIMIT 1")
                defer { any.reset() }
                guard try !any.step() else { return false }
                for definition in definitions {
                    _ = try Self.insert(
                        definition, anchor: anchor(definition), by: attribution, as: .seedCarousel, into: connection)
                }
                return true
            }
        }
    }

    public func importDefinitions(
        _ imported: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor, by attribution: Attribution
    ) throws(StoreError) {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                let existing = try Self.read(connection)
                for definition in imported {
                    let current = existing.first { $0.name == definition.name }
                    let decodedCurrent = current.flatMap { try? decoded($0) }
                    let newAnchor = anchor(definition, decodedCurrent)
                    if let current {
                        let replaced = StoredCarousel(
                            definition: definition, revision: current.revision + 1, anchor: newAnchor,
                            serial: current.serial)
                        try Self.replace(replaced, in: connection)
                        try Self.keep(
                            Revision(replaced.revision, of: definition, over: decodedCurrent?.definition, attribution),
                            of: current.serial, in: connection)
                        try Self.append(
                            [
                                AuditEntry(
                                    .importCarousel, attribution, carousel: definition.name,
                                    revision: replaced.revision)
                            ], in: connection)
                    } else {
                        _ = try Self.insert(
                            definition, anchor: newAnchor, by: attribution, as: .importCarousel, into: connection)
                    }
                }
            }
        }
    }

    // MARK: Tokens

    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                guard try Self.insert(token, into: connection) else { return false }
                try Self.append([AuditEntry(.createToken, attribution, target: token.name)], in: connection)
                return true
            }
        }
    }

    /// False when the name is taken.
    private static func insert(_ token: TokenRecord, into connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let insert = try connection.statement(
            """
            INSERT INTO tokens (name, role, carousels, expires_at, created_at, created_by, digest)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name) DO NOTHING RETURNING 1
            """
        ).bind(
            .text(token.name), .text(token.role.rawValue), token.storedCarousels.map { .text($0) },
            token.expiresAt.map { .integer($0.nanosecondsSinceEpoch) },
            .integer(token.createdAt.nanosecondsSinceEpoch), .text(token.createdBy), .text(token.digest))
        defer { insert.reset() }
        return try insert.step()
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(
                "SELECT name, role, carousels, expires_at, created_at, created_by, digest FROM tokens ORDER BY name")
            defer { statement.reset() }
            var tokens: [TokenRecord] = []
            while try statement.step() {
                tokens.append(
                    TokenRecord(
                        name: statement.text(0) ?? "", role: TokenRole(rawValue: statement.text(1) ?? "") ?? .stats,
                        carousels: TokenRecord.carousels(stored: statement.text(2)),
                        expiresAt: statement.integer(3).map { Timestamp(nanosecondsSinceEpoch: $0) },
                        createdAt: Timestamp(nanosecondsSinceEpoch: statement.integer(4) ?? 0),
                        createdBy: statement.text(5) ?? "", digest: statement.text(6) ?? ""))
            }
            return tokens
        }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                try connection.statement("DELETE FROM tokens WHERE name = ?1").bind(.text(name)).run()
                guard connection.changes > 0 else { return false }
                try Self.append([AuditEntry(.revokeToken, attribution, target: name)], in: connection)
                return true
            }
        }
    }

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
            let statement = try connection.statement(
                "SELECT id, url, events, secret, created_at, created_by FROM webhooks ORDER BY id")
            defer { statement.reset() }
            var webhooks: [WebhookRecord] = []
            while try statement.step() {
                webhooks.append(
                    WebhookRecord(
                        id: statement.integer(0) ?? 0, url: statement.text(1) ?? "",
                        events: WebhookRecord.events(stored: statement.text(2) ?? ""), secret: statement.text(3) ?? "",
                        createdAt: Timestamp(nanosecondsSinceEpoch: statement.integer(4) ?? 0),
                        createdBy: statement.text(5) ?? ""))
            }
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
    private func bookkeeping<Result>(_ body: (SQLiteConnection) throws(SQLiteError) -> Result) throws(StoreError)
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
    private static func queue(_ events: [QueuedEvent], in connection: SQLiteConnection) throws(SQLiteError) {
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
                    last_error = ?4, delivered_at = ?5, next_attempt_at = ?6, claimed_until = NULL
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
                    DeliveryRecord(integer: { statement.integer(Int32($0)) }, text: { statement.text(Int32($0)) }))
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
            let statement = try connection.statement("SELECT \(PendingChange.columns) FROM pending ORDER BY at, id")
            defer { statement.reset() }
            var changes: [PendingChange] = []
            while try statement.step() {
                changes.append(
                    PendingChange(integer: { statement.integer(Int32($0)) }, text: { statement.text(Int32($0)) }))
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
    private static func name(of serial: Int64, in connection: SQLiteConnection) throws(SQLiteError) -> String? {
        let statement = try connection.statement("SELECT name FROM carousels WHERE serial = ?1").bind(.integer(serial))
        defer { statement.reset() }
        return try statement.step() ? statement.text(0) : nil
    }

    // MARK: Audit log

    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT seq, at, actor, action, carousel, target, revision, request_id FROM audit
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
                let record = AuditRecord(
                    seq: statement.integer(0) ?? 0, at: statement.integer(1) ?? 0, actor: statement.text(2) ?? "",
                    action: statement.text(3) ?? "", carousel: statement.text(4), target: statement.text(5),
                    revision: statement.integer(6), requestID: statement.text(7))
                records.append(record)
            }
            return records
        }
    }

    /// Appends `entries` to the audit log, in the caller's transaction, and queues what they tell
    /// webhooks (`published`: the write makes a scheduled change). (`make bench`'s second build,
    /// `-DNO_AUDIT_LOG`, appends nothing: the same writes without their entries, to measure what
    /// the log costs them, docs/PERFORMANCE.md.)
    private static func append(_ entries: [AuditEntry], published: Bool = false, in connection: SQLiteConnection)
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
            let statement = try connection.statement(
                "SELECT revision, at, actor, summary FROM revisions WHERE carousel = ?1 ORDER BY revision DESC"
            ).bind(.integer(serial))
            defer { statement.reset() }
            var records: [RevisionRecord] = []
            while try statement.step() {
                records.append(
                    RevisionRecord(
                        revision: UInt64(statement.integer(0) ?? 0),
                        at: Timestamp(nanosecondsSinceEpoch: statement.integer(1) ?? 0), actor: statement.text(2) ?? "",
                        summary: statement.text(3) ?? ""))
            }
            return records
        }
    }

    public func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        let row = try on(admin) { connection throws(SQLiteError) -> (RevisionRecord, String)? in
            let statement = try connection.statement(
                "SELECT at, actor, summary, definition FROM revisions WHERE carousel = ?1 AND revision = ?2"
            ).bind(.integer(serial), .integer(Int64(clamping: revision)))
            defer { statement.reset() }
            guard try statement.step() else { return nil }
            let record = RevisionRecord(
                revision: revision, at: Timestamp(nanosecondsSinceEpoch: statement.integer(0) ?? 0),
                actor: statement.text(1) ?? "", summary: statement.text(2) ?? "")
            return (record, statement.text(3) ?? "")
        }
        guard let (record, text) = row else { return nil }
        let definition = try DecodedDefinitions.decode(
            text, of: "revision \(revision) of carousel \(serial)", store: description)
        return Revision(record: record, definition: definition)
    }

    // MARK: Proof of play

    public func record(_ batch: StatsBatch) throws(StoreError) {
        guard !batch.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for play in batch.plays {
                    try connection.statement(
                        """
                        INSERT INTO plays (carousel, audience, started_at, banner, last_shown_at)
                        VALUES (?1, ?2, ?3, ?4, ?5)
                        ON CONFLICT (carousel, audience, started_at) DO UPDATE SET
                            last_shown_at = max(last_shown_at, excluded.last_shown_at)
                        """
                    ).bind(
                        .integer(play.carousel), .text(AudienceKeyColumn.text(play.audience)),
                        .integer(play.startedAt.nanosecondsSinceEpoch), .text(play.banner),
                        .integer(play.lastShownAt.nanosecondsSinceEpoch)
                    ).run()
                }
                var counts = batch.engagement
                // A view whose id is new here counts; a repeat inserts nothing and returns no row.
                for view in batch.identifiedViews {
                    let insert = try connection.statement(
                        """
                        INSERT INTO view_reports (carousel, id, reported_at) VALUES (?1, ?2, ?3)
                        ON CONFLICT (carousel, id) DO NOTHING RETURNING 1
                        """
                    ).bind(.integer(view.carousel), .text(view.id), .integer(view.reportedAt.nanosecondsSinceEpoch))
                    let inserted = try insert.step()
                    insert.reset()  // done with it: a statement left running would hold the commit back
                    if inserted {
                        counts.append(view.count)
                    }
                }
                if let cutoff = batch.forgetReportsBefore {
                    try connection.statement("DELETE FROM view_reports WHERE reported_at < ?1")
                        .bind(.integer(cutoff.nanosecondsSinceEpoch)).run()
                }
                for count in EngagementCount.added(counts) {
                    try connection.statement(
                        """
                        INSERT INTO engagement (carousel, audience, quarter, banner, views, clicks)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                        ON CONFLICT (carousel, audience, quarter, banner) DO UPDATE SET
                            views = views + excluded.views, clicks = clicks + excluded.clicks
                        """
                    ).bind(
                        .integer(count.carousel), .text(AudienceKeyColumn.text(count.audience)),
                        .integer(count.quarter),
                        .text(count.banner), .integer(count.views), .integer(count.clicks)
                    ).run()
                }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try on(admin) { connection throws(SQLiteError) in
            let plays = try Self.plays(
                connection.statement(
                    """
                    SELECT carousel, audience, banner, started_at, last_shown_at FROM plays
                    WHERE carousel = ?1 AND audience = ?2 AND last_shown_at >= ?3 AND started_at < ?4
                    ORDER BY started_at
                    """
                ).bind(
                    .integer(serial), .text(AudienceKeyColumn.text(audience)), .integer(from.nanosecondsSinceEpoch),
                    .integer(to.nanosecondsSinceEpoch)))
            let counts = try connection.statement(
                """
                SELECT carousel, banner, quarter, views, clicks FROM engagement
                WHERE carousel = ?1 AND audience = ?2 AND quarter * 1000000000 >= ?3 AND quarter * 1000000000 < ?4
                ORDER BY quarter, banner
                """
            ).bind(
                .integer(serial), .text(AudienceKeyColumn.text(audience)), .integer(from.nanosecondsSinceEpoch),
                .integer(to.nanosecondsSinceEpoch))
            var engagement: [EngagementCount] = []
            while try counts.step() {
                engagement.append(
                    EngagementCount(
                        carousel: counts.integer(0) ?? 0, audience: audience, banner: counts.text(1) ?? "",
                        quarter: counts.integer(2) ?? 0, views: counts.integer(3) ?? 0, clicks: counts.integer(4) ?? 0))
            }
            return StatsRecords(plays: plays, engagement: engagement)
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try on(admin) { connection throws(SQLiteError) in
            try Self.plays(
                connection.statement(
                    """
                    SELECT carousel, audience, banner, started_at, last_shown_at FROM plays
                    WHERE carousel = ?1 AND audience = ?2 ORDER BY started_at DESC LIMIT 1
                    """
                ).bind(.integer(serial), .text(AudienceKeyColumn.text(audience)))
            ).first
        }
    }

    /// The rows of a query of `carousel, audience, banner, started_at, last_shown_at`.
    private static func plays(_ statement: SQLiteStatement) throws(SQLiteError) -> [PlayRecord] {
        var plays: [PlayRecord] = []
        while try statement.step() {
            let startedAt = Timestamp(nanosecondsSinceEpoch: statement.integer(3) ?? 0)
            plays.append(
                PlayRecord(
                    carousel: statement.integer(0) ?? 0, audience: AudienceKeyColumn.audience(statement.text(1)),
                    banner: statement.text(2) ?? "", startedAt: startedAt,
                    shown: Timestamp(nanosecondsSinceEpoch: statement.integer(4) ?? 0) - startedAt))
        }
        return plays
    }

    // MARK: The fleet

    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        guard !sightings.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for sighting in sightings {
                    let carousel = SQLiteValue.integer(sighting.key.carousel)
                    let id = SQLiteValue.text(sighting.key.id.rawValue)
                    // `ScreenSighting.merged(into:timeout:)`, in SQL.
                    try connection.statement(
                        """
                        INSERT INTO screens (carousel, id, last_seen, heard_since, via, user_agent, audience)
                        SELECT ?1, ?2, ?3, ?3, ?4, ?5, ?7 WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = ?1)
                        ON CONFLICT (carousel, id) DO UPDATE SET
                            heard_since = CASE WHEN excluded.last_seen - last_seen > ?6
                                THEN excluded.last_seen ELSE heard_since END,
                            via = CASE WHEN excluded.last_seen >= last_seen THEN excluded.via ELSE via END,
                            user_agent = CASE WHEN excluded.last_seen >= last_seen
                                THEN excluded.user_agent ELSE user_agent END,
                            audience = CASE WHEN excluded.last_seen >= last_seen
                                THEN excluded.audience ELSE audience END,
                            last_seen = max(last_seen, excluded.last_seen)
                        """
                    ).bind(
                        carousel, id, .integer(sighting.heardAt.nanosecondsSinceEpoch), .text(sighting.via.rawValue),
                        .text(sighting.userAgent), .integer(timeout.nanoseconds), sighting.audience.map { .text($0) }
                    ).run()
                    guard let receipt = sighting.receipt else { continue }
                    try connection.statement(
                        """
                        UPDATE screens SET banner = ?3, version = ?4, shown_at = ?5, lateness = ?6,
                            verdict_since = CASE WHEN shown_at IS NOT NULL AND out_of_step IS ?7
                                THEN verdict_since ELSE ?8 END,
                            out_of_step = ?7, offset_ms = ?9, rtt_ms = ?10
                        WHERE carousel = ?1 AND id = ?2 AND (shown_at IS NULL OR shown_at <= ?5)
                        """
                    ).bind(
                        carousel, id, .text(receipt.banner), .integer(Int64(clamping: receipt.version)),
                        .integer(receipt.shownAt.nanosecondsSinceEpoch),
                        receipt.lateness.map { .integer($0.nanoseconds) },
                        receipt.outOfStep.map { .text($0.rawValue) },
                        .integer(receipt.verdictSince.nanosecondsSinceEpoch),
                        receipt.offsetMs.map { .integer($0) }, receipt.rttMs.map { .integer($0) }
                    ).run()
                }
            }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let rows = try connection.statement("SELECT \(ScreenRecord.columns) FROM screens")
            var screens: [ScreenRecord] = []
            while try rows.step() {
                if let screen = ScreenRecord(
                    integer: { rows.integer(Int32($0)) }, text: { rows.text(Int32($0)) })
                {
                    screens.append(screen)
                }
            }
            return screens
        }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try on(commands) { connection throws(SQLiteError) in
            try connection.statement("DELETE FROM screens WHERE last_seen < ?1").bind(
                .integer(cutoff.nanosecondsSinceEpoch)
            ).run()
            return connection.changes
        }
    }

    // MARK: Connections

    /// Runs `body` on a connection, alone on it; SQLite's errors become what an operator reads.
    private func on<Result>(
        _ connection: Lock<SQLiteConnection>, _ body: (SQLiteConnection) throws(SQLiteError) -> Result
    ) throws(StoreError) -> Result {
        do {
            return try connection.withLock { connection throws(SQLiteError) in try body(connection) }
        } catch {
            throw Self.failure(error, path: path, busyTimeout: busyTimeout)
        }
    }

    private static func connect(_ path: String, synchronous: String, busyTimeout: Duration) throws(SQLiteError)
        -> SQLiteConnection
    {
        let connection = try SQLiteConnection(path: path)
        connection.waitWhileBusy(upTo: busyTimeout)
        try connection.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA foreign_keys = ON")
        return connection
    }

    /// What an operator reads for a failed SQLite call, by result code.
    static func failure(_ error: SQLiteError, path: String, busyTimeout: Duration) -> StoreError {
        switch error.primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED:
            .unavailable(
                "the SQLite store \(path) stayed locked by another connection for \(busyTimeout.seconds) s "
                    + "(\(error.message)); find the process holding it (a backup, a sqlite3 shell) and end its transaction"
            )
        case SQLITE_READONLY:
            .unavailable(
                "the SQLite store \(path) is read-only (\(error.message)); make the file, its -wal and -shm files "
                    + "and its folder writable by this process (uid \(getuid())), then restart banner-server")
        case SQLITE_FULL:
            .unavailable("the disk holding the SQLite store \(path) is full (\(error.message)); free space on it")
        case SQLITE_IOERR, SQLITE_CANTOPEN:
            .unavailable("the SQLite store \(path) cannot be read or written: \(error.message)")
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            .unusable("\(path) is not a usable SQLite store: \(error.message); move it away or give another --store")
        default:
            .unavailable("the SQLite store \(path) failed: \(error)")
        }
    }

    private static func createFolder(of path: String) throws(StoreError) {
        var folder = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (offset, part) in parts.enumerated() {
            folder += (offset == 0 ? "" : "/") + part
            guard !part.isEmpty, part != "." else { continue }
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                throw .unusable(
                    "cannot create the folder \(folder) for the store \(path): \(String(cString: strerror(errno)))")
            }
        }
    }

    // MARK: Media

    public func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                let insert = try connection.statement(
                    """
                    INSERT INTO media (id, type, width, height, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """
                ).bind(
                    .text(media.id), .text(media.type), .integer(Int64(media.width)), .integer(Int64(media.height)),
                    .integer(media.createdAt.nanosecondsSinceEpoch))
                let inserted = try insert.step()
                insert.reset()
                guard inserted else { return false }
                let files = [(0, media.original)] + media.variants.map { ($0.width, $0.webp) }
                for (width, bytes) in files {
                    try connection.statement("INSERT INTO media_files (media, width, bytes) VALUES (?1, ?2, ?3)")
                        .bind(.text(media.id), .integer(Int64(width)), .blob(bytes)).run()
                }
                try Self.append([AuditEntry(.uploadMedia, attribution, target: media.id)], in: connection)
                return true
            }
        }
    }

    public func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(
                """
                SELECT m.id, m.type, m.width, m.height, m.created_at, f.width, length(f.bytes)
                FROM media m JOIN media_files f ON f.media = m.id WHERE ?1 IS NULL OR m.id = ?1
                ORDER BY m.created_at, m.id, f.width
                """
            ).bind(id.map { .text($0) })
            defer { statement.reset() }
            var rows:
                [(id: String, type: String, width: Int, height: Int, createdAt: Timestamp, file: Int, size: Int)] =
                    []
            while try statement.step() {
                rows.append(
                    (
                        statement.text(0) ?? "", statement.text(1) ?? "", Int(statement.integer(2) ?? 0),
                        Int(statement.integer(3) ?? 0),
                        Timestamp(nanosecondsSinceEpoch: statement.integer(4) ?? 0), Int(statement.integer(5) ?? 0),
                        Int(statement.integer(6) ?? 0)
                    ))
            }
            return Store.mediaRecords(fromRows: rows)
        }
    }

    public func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement("SELECT bytes FROM media_files WHERE media = ?1 AND width = ?2")
                .bind(.text(id), .integer(Int64(file.storedWidth)))
            defer { statement.reset() }
            return try statement.step() ? statement.blob(0) : nil
        }
    }

    /// One writer at a time: the uses read here cannot change before the deletion commits.
    public func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        var undecodable: StoreError?
        let deletion = try on(admin) { connection throws(SQLiteError) -> MediaDeletion in
            try connection.transaction { () throws(SQLiteError) -> MediaDeletion in
                guard try Self.missingImages([id], in: connection).isEmpty else { return .notFound }
                var uses: [MediaUse] = []
                // Only a definition whose text has the id in it can show the image.
                for row in try Self.read(connection, containing: id) {
                    do throws(StoreError) {
                        uses += try decoded(row).definition.uses(ofImage: id)
                    } catch {
                        undecodable = error
                        throw SQLiteError(code: SQLITE_ABORT, message: "\(error)", during: "reading \(row.name)")
                    }
                }
                guard uses.isEmpty else { return .inUse(uses) }
                try connection.statement("DELETE FROM media_files WHERE media = ?1").bind(.text(id)).run()
                try connection.statement("DELETE FROM media WHERE id = ?1").bind(.text(id)).run()
                try Self.append([AuditEntry(.deleteMedia, attribution, target: id)], in: connection)
                return .deleted
            }
        }
        if let undecodable { throw undecodable }
        return deletion
    }

    /// Those of the images `ids` that are not stored.
    private static func missingImages(_ ids: [String], in connection: SQLiteConnection) throws(SQLiteError)
        -> [String]
    {
        guard !ids.isEmpty else { return [] }
        let stored = try connection.statement("SELECT 1 FROM media WHERE id = ?1")
        var missing: [String] = []
        for id in ids {
            defer { stored.reset() }
            if try !stored.bind(.text(id)).step() { missing.append(id) }
        }
        return missing
    }

    // MARK: Schema

    /// Each step of the schema, oldest first; a step is never edited once released.
    private static let migrations: [String] = [
        """
        CREATE TABLE store (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE carousels (
            serial INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL UNIQUE,
            definition TEXT NOT NULL,
            revision INTEGER NOT NULL,
            position INTEGER,
            playing_since INTEGER,
            paused_until INTEGER,
            version INTEGER NOT NULL
        );
        """,
        // Schedules and takeovers (docs/SCHEDULES.md): when the anchor was taken, and the takeover.
        """
        ALTER TABLE carousels ADD COLUMN changed_at INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE carousels ADD COLUMN takeover TEXT;
        """,
        // Proof of play (docs/STATS.md): plays by start, views and clicks by quarter hour.
        """
        CREATE TABLE plays (
            carousel INTEGER NOT NULL,
            started_at INTEGER NOT NULL,
            banner TEXT NOT NULL,
            last_shown_at INTEGER NOT NULL,
            PRIMARY KEY (carousel, started_at)
        );
        CREATE INDEX plays_by_last_shown ON plays (carousel, last_shown_at);
        CREATE TABLE engagement (
            carousel INTEGER NOT NULL,
            quarter INTEGER NOT NULL,
            banner TEXT NOT NULL,
            views INTEGER NOT NULL,
            clicks INTEGER NOT NULL,
            PRIMARY KEY (carousel, quarter, banner)
        );
        """,
        // The fleet (docs/SCREENS.md): each screen's presence and latest receipt.
        """
        CREATE TABLE screens (
            carousel INTEGER NOT NULL,
            id TEXT NOT NULL,
            last_seen INTEGER NOT NULL,
            heard_since INTEGER NOT NULL,
            via TEXT NOT NULL,
            user_agent TEXT NOT NULL,
            banner TEXT,
            version INTEGER,
            shown_at INTEGER,
            lateness INTEGER,
            out_of_step TEXT,
            verdict_since INTEGER,
            offset_ms INTEGER,
            rtt_ms INTEGER,
            PRIMARY KEY (carousel, id)
        );
        CREATE INDEX screens_by_last_seen ON screens (last_seen);
        """,
        // Views reported with ids (docs/STATS.md): each id kept 48 hours, a repeat not counted.
        """
        CREATE TABLE view_reports (
            carousel INTEGER NOT NULL,
            id TEXT NOT NULL,
            reported_at INTEGER NOT NULL,
            PRIMARY KEY (carousel, id)
        ) WITHOUT ROWID;
        CREATE INDEX view_reports_by_age ON view_reports (reported_at);
        """,
        // The media library (docs/MEDIA.md): each image, and its files (width 0: the original).
        """
        CREATE TABLE media (
            id TEXT PRIMARY KEY,
            type TEXT NOT NULL,
            width INTEGER NOT NULL,
            height INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE media_files (
            media TEXT NOT NULL,
            width INTEGER NOT NULL,
            bytes BLOB NOT NULL,
            PRIMARY KEY (media, width)
        );
        """,
        // History (docs/HISTORY.md): each carousel's revisions; the definitions stored before
        // it are kept as their current revision, by no one known.
        """
        CREATE TABLE revisions (
            carousel INTEGER NOT NULL,
            revision INTEGER NOT NULL,
            at INTEGER NOT NULL,
            actor TEXT NOT NULL,
            summary TEXT NOT NULL,
            definition TEXT NOT NULL,
            PRIMARY KEY (carousel, revision)
        );
        INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
        SELECT serial, revision, CAST((julianday('now') - 2440587.5) * 86400000000000.0 AS INTEGER), 'unrecorded',
            'as stored when history began', definition
        FROM carousels;
        """,
        // Named tokens (docs/TOKENS.md): never a secret, only its SHA-256.
        """
        CREATE TABLE tokens (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL,
            carousels TEXT,
            expires_at INTEGER,
            created_at INTEGER NOT NULL,
            created_by TEXT NOT NULL,
            digest TEXT NOT NULL UNIQUE
        );
        """,
        // The audit log (docs/AUDIT.md): appended in each write's transaction, never changed.
        """
        CREATE TABLE audit (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            at INTEGER NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            carousel TEXT,
            target TEXT,
            revision INTEGER,
            request_id TEXT
        );
        CREATE INDEX audit_by_at ON audit (at);
        """,
        // Scheduled changes (docs/SCHEDULED.md): each admin request to make at its time.
        """
        CREATE TABLE pending (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            carousel INTEGER NOT NULL,
            at INTEGER NOT NULL,
            method TEXT NOT NULL,
            path TEXT NOT NULL,
            body TEXT NOT NULL,
            if_match TEXT,
            actor TEXT NOT NULL,
            request_id TEXT,
            created_at INTEGER NOT NULL
        );
        CREATE INDEX pending_by_carousel ON pending (carousel);
        """,
        // Webhooks (docs/WEBHOOKS.md): the secret kept as given, to sign each delivery.
        """
        CREATE TABLE webhooks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            url TEXT NOT NULL,
            events TEXT NOT NULL,
            secret TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            created_by TEXT NOT NULL
        );
        """,
        // Webhook deliveries (docs/WEBHOOKS.md): one row per event and webhook, queued in the
        // transaction of what caused it; due while next_attempt_at is set.
        """
        CREATE TABLE deliveries (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            webhook INTEGER NOT NULL,
            event TEXT NOT NULL,
            type TEXT NOT NULL,
            body TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_attempt_at INTEGER,
            claimed_until INTEGER,
            last_attempt_at INTEGER,
            last_status INTEGER,
            last_error TEXT,
            delivered_at INTEGER,
            UNIQUE (webhook, event)
        );
        CREATE INDEX deliveries_due ON deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
        """,
        // The turn in a weighted cycle (docs/WEIGHTS.md); NULL: the banner's first turn.
        "ALTER TABLE carousels ADD COLUMN turn INTEGER;",
        // Each audience's anchor (docs/AUDIENCES.md), JSON; NULL: no audiences.
        "ALTER TABLE carousels ADD COLUMN audiences TEXT;",
        // Audiences' screens (docs/AUDIENCES.md): plays and counts of each audience's screens apart
        // ('' for screens of no audience, which every row before was), and a screen's audience.
        """
        CREATE TABLE plays_by_audience (
            carousel INTEGER NOT NULL,
            audience TEXT NOT NULL,
            started_at INTEGER NOT NULL,
            banner TEXT NOT NULL,
            last_shown_at INTEGER NOT NULL,
            PRIMARY KEY (carousel, audience, started_at)
        );
        INSERT INTO plays_by_audience SELECT carousel, '', started_at, banner, last_shown_at FROM plays;
        DROP TABLE plays;
        ALTER TABLE plays_by_audience RENAME TO plays;
        CREATE INDEX plays_by_last_shown ON plays (carousel, audience, last_shown_at);
        CREATE TABLE engagement_by_audience (
            carousel INTEGER NOT NULL,
            audience TEXT NOT NULL,
            quarter INTEGER NOT NULL,
            banner TEXT NOT NULL,
            views INTEGER NOT NULL,
            clicks INTEGER NOT NULL,
            PRIMARY KEY (carousel, audience, quarter, banner)
        );
        INSERT INTO engagement_by_audience SELECT carousel, '', quarter, banner, views, clicks FROM engagement;
        DROP TABLE engagement;
        ALTER TABLE engagement_by_audience RENAME TO engagement;
        ALTER TABLE screens ADD COLUMN audience TEXT;
        """,
    ]

    /// Brings the store to `schemaVersion`; returns its identity.
    private static func migrate(_ connection: SQLiteConnection, path: String) throws -> String {
        // A current store is only read here: a read-only one still serves.
        if try userVersion(connection) < schemaVersion {
            try migrateSteps(connection)
        }
        let version = try userVersion(connection)
        guard version == schemaVersion else {
            throw StoreError.unusable(
                "\(path) has schema version \(version), newer than this banner-server's \(schemaVersion): "
                    + "run a banner-server at least as new as the one that wrote it, or give another --store")
        }
        let statement = try connection.statement("SELECT value FROM store WHERE key = 'identity'")
        defer { statement.reset() }
        guard try statement.step(), let identity = statement.text(0) else {
            throw StoreError.unusable("\(path) has no identity row; it was not written by banner-server")
        }
        return identity
    }

    /// The steps from the stored version to `schemaVersion`, in one transaction (which re-reads
    /// the version, the write lock held).
    private static func migrateSteps(_ connection: SQLiteConnection) throws(SQLiteError) {
        try connection.transaction { () throws(SQLiteError) in
            let found = try userVersion(connection)
            guard found < schemaVersion else { return }
            for step in migrations[found...] { try connection.execute(step) }
            if found == 0 {
                let identity = String(UInt64.random(in: .min ... .max), radix: 36)
                try connection.statement("INSERT INTO store (key, value) VALUES ('identity', ?1)")
                    .bind(.text(identity)).run()
            }
            try connection.execute("PRAGMA user_version = \(schemaVersion)")
        }
    }

    private static func userVersion(_ connection: SQLiteConnection) throws(SQLiteError) -> Int {
        let statement = try connection.statement("PRAGMA user_version")
        defer { statement.reset() }
        _ = try statement.step()
        return Int(statement.integer(0) ?? 0)
    }

    // MARK: Rows

    private static func revision(of serial: Int64, in connection: SQLiteConnection) throws(SQLiteError) -> UInt64? {
        let statement = try connection.statement("SELECT revision FROM carousels WHERE serial = ?1")
            .bind(.integer(serial))
        defer { statement.reset() }
        guard try statement.step(), let revision = statement.integer(0) else { return nil }
        return UInt64(revision)
    }

    /// A new carousel's row, at revision 1, kept as its first revision and in the audit log as
    /// `action`; returns its serial.
    private static func insert(
        _ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution, as action: AuditAction,
        into connection: SQLiteConnection
    ) throws(SQLiteError) -> Int64 {
        let anchorParameters = (4..<4 + AnchorColumns.names.count).map { "?\($0)" }.joined(separator: ", ")
        let statement = try connection.statement(
            """
            INSERT INTO carousels (name, definition, revision, \(AnchorColumns.names.joined(separator: ", ")))
            VALUES (?1, ?2, ?3, \(anchorParameters)) RETURNING serial
            """
        ).bind(
            [.text(definition.name), .text(definition.storedText), .integer(1)]
                + Self.bindable(AnchorColumns(anchor)))
        let serial = try { () throws(SQLiteError) -> Int64 in
            defer { statement.reset() }
            _ = try statement.step()
            return statement.integer(0) ?? 0
        }()
        try keep(Revision(of: definition, over: nil, attribution), of: serial, in: connection)
        try append([AuditEntry(action, attribution, carousel: definition.name, revision: 1)], in: connection)
        return serial
    }

    /// Adds `revision` to carousel `serial`'s history, and prunes what `RevisionRetention` lets go.
    private static func keep(_ revision: Revision, of serial: Int64, in connection: SQLiteConnection)
        throws(SQLiteError)
    {
        let record = revision.record
        try connection.statement(
            """
            INSERT INTO revisions (carousel, revision, at, actor, summary, definition)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """
        ).bind(
            .integer(serial), .integer(Int64(clamping: record.revision)), .integer(record.at.nanosecondsSinceEpoch),
            .text(record.actor), .text(record.summary), .text(revision.definition.storedText)
        ).run()
        guard let (through, before) = RevisionRetention.pruning(after: record) else { return }
        try connection.statement("DELETE FROM revisions WHERE carousel = ?1 AND revision <= ?2 AND at < ?3")
            .bind(.integer(serial), .integer(Int64(clamping: through)), .integer(before.nanosecondsSinceEpoch)).run()
    }

    private static func replace(_ stored: StoredCarousel, in connection: SQLiteConnection) throws(SQLiteError) {
        let assignments = AnchorColumns.names.enumerated().map { "\($1) = ?\($0 + 4)" }.joined(separator: ", ")
        try connection.statement(
            "UPDATE carousels SET definition = ?2, revision = ?3, \(assignments) WHERE serial = ?1"
        ).bind(
            [.integer(stored.serial), .text(stored.definition.storedText), .integer(Int64(stored.revision))]
                + Self.bindable(AnchorColumns(stored.anchor))
        ).run()
    }

    /// Rows of `carousels`, by name: all of them, the one of `name` or `serial`, or those whose
    /// definition's text contains `text`.
    private static func read(
        _ connection: SQLiteConnection, name: String? = nil, serial: Int64? = nil, containing text: String? = nil
    ) throws(SQLiteError) -> [Row] {
        let columns = "serial, name, definition, revision, " + AnchorColumns.names.joined(separator: ", ")
        let statement =
            if let name {
                try connection.statement("SELECT \(columns) FROM carousels WHERE name = ?1").bind(.text(name))
            } else if let serial {
                try connection.statement("SELECT \(columns) FROM carousels WHERE serial = ?1").bind(.integer(serial))
            } else if let text {
                try connection.statement(
                    "SELECT \(columns) FROM carousels WHERE instr(definition, ?1) > 0 ORDER BY name"
                ).bind(.text(text))
            } else {
                try connection.statement("SELECT \(columns) FROM carousels ORDER BY name")
            }
        defer { statement.reset() }
        var rows: [Row] = []
        while try statement.step() {
            rows.append(
                Row(
                    serial: statement.integer(0) ?? 0, name: statement.text(1) ?? "",
                    definition: statement.text(2) ?? "",
                    revision: UInt64(statement.integer(3) ?? 0),
                    anchor: AnchorColumns(
                        position: statement.integer(4), playingSince: statement.integer(5),
                        pausedUntil: statement.integer(6), version: statement.integer(7) ?? 1,
                        changedAt: statement.integer(8) ?? 0, takeover: statement.text(9),
                        turn: statement.integer(10), audiences: statement.text(11))))
        }
        return rows
    }

    /// An anchor's columns as statement values.
    private static func bindable(_ columns: AnchorColumns) -> [SQLiteValue?] {
        columns.values.map { value in
            switch value {
            case .integer(let integer): integer.map(SQLiteValue.integer)
            case .text(let text): text.map(SQLiteValue.text)
            }
        }
    }

    /// A row as a stored carousel; its definition decoded once per revision, and kept for the
    /// next write when `keeping` (not when every row is read).
    private func decoded(_ row: Row, keeping: Bool = true) throws(StoreError) -> StoredCarousel {
        let definition = try definitions.definition(
            serial: row.serial, revision: row.revision, name: row.name, text: row.definition, store: path,
            keeping: keeping)
        return StoredCarousel(
            definition: definition, revision: row.revision, anchor: row.anchor.anchor, serial: row.serial)
    }

    /// A row of `carousels` as read.
    private struct Row {
        let serial: Int64
        let name: String
        let definition: String
        let revision: UInt64
        let anchor: AnchorColumns
    }

}
