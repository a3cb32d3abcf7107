import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: CarouselDefinitionStore {
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

    // MARK: Rows

    static let columns = "serial, name, definition, revision, " + AnchorColumns.names.joined(separator: ", ")

    /// A new carousel's row, kept as its first revision and in the audit log as `action`.
    static func insert(
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
    static func keeping(_ revision: Revision, of source: String, _ parameters: inout [String?]) -> String {
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
    static let insertRow = """
        INSERT INTO carousels (name, definition, revision, \(AnchorColumns.names.joined(separator: ", ")))
        VALUES ($1, $2, 1, \((3..<3 + AnchorColumns.names.count).map { "$\($0)" }.joined(separator: ", ")))
        """

    /// The notification of a change: the name, then what a replica needs to follow a command
    /// without reading the row (`ChangeNote`): serial, revision, and the anchor's integer columns,
    /// `-` for NULL. Under a takeover or with audiences only the name (its banner, or 64
    /// audiences' anchors, would not fit a notification's 8000 bytes): replicas read the row.
    static let note = """
        pg_notify('\(channel)', CASE WHEN takeover IS NULL AND audiences IS NULL THEN concat_ws(' ', name, serial, revision,
            coalesce(position::text, '-'), coalesce(playing_since::text, '-'), coalesce(paused_until::text, '-'),
            version, changed_at, coalesce(turn::text, '-')) ELSE name END)
        """

    /// Writes `stored` over its row; with `previous`, only if the row is still exactly that (its
    /// revision and anchor), and the definition only when the revision moves (a command leaves
    /// it alone); with `revision`, kept in the history, and `entries` appended to the audit log,
    /// in the same statement. Returns whether the row was written.
    static func replace(
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
    static func parameters(_ columns: AnchorColumns) -> [String?] {
        columns.values.map { value in
            switch value {
            case .integer(let integer): integer.map { String($0) }
            case .text(let text): text
            }
        }
    }

    /// A row of `columns` as a stored carousel; its definition decoded once per revision.
    func decoded(_ row: [String?], keeping: Bool = true) throws(StoreError) -> StoredCarousel {
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
