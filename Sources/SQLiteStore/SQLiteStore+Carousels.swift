import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: CarouselDefinitionStore {
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
                try Self.replace(changed, over: stored, in: connection)
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
                        try Self.replace(replaced, over: nil, in: connection)
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

    // MARK: Rows

    static func revision(of serial: Int64, in connection: SQLiteConnection) throws(SQLiteError) -> UInt64? {
        let statement = try connection.statement("SELECT revision FROM carousels WHERE serial = ?1")
            .bind(.integer(serial))
        defer { statement.reset() }
        guard try statement.step(), let revision = statement.integer(0) else { return nil }
        return UInt64(revision)
    }

    /// A new carousel's row, at revision 1, kept as its first revision and in the audit log as
    /// `action`; returns its serial.
    static func insert(
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
    static func keep(_ revision: Revision, of serial: Int64, in connection: SQLiteConnection)
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

    /// Writes `stored` over its row; the definition only when the revision moves over `previous`'s
    /// (a command moves the anchor alone, and encoding the whole definition was most of its cost:
    /// docs/PERFORMANCE.md, "What a command costs").
    static func replace(_ stored: StoredCarousel, over previous: StoredCarousel?, in connection: SQLiteConnection)
        throws(SQLiteError)
    {
        var assignments =
            "revision = ?2, "
            + AnchorColumns.names.enumerated().map { "\($1) = ?\($0 + 3)" }
            .joined(separator: ", ")
        var values: [SQLiteValue?] =
            [.integer(stored.serial), .integer(Int64(stored.revision))] + Self.bindable(AnchorColumns(stored.anchor))
        if stored.revision != previous?.revision {
            values.append(.text(stored.definition.storedText))
            assignments += ", definition = ?\(values.count)"
        }
        try connection.statement("UPDATE carousels SET \(assignments) WHERE serial = ?1").bind(values).run()
    }

    /// Rows of `carousels`, by name: all of them, the one of `name` or `serial`, or those whose
    /// definition's text contains `text`.
    static func read(
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
    static func bindable(_ columns: AnchorColumns) -> [SQLiteValue?] {
        columns.values.map { value in
            switch value {
            case .integer(let integer): integer.map(SQLiteValue.integer)
            case .text(let text): text.map(SQLiteValue.text)
            }
        }
    }

    /// A row as a stored carousel; its definition decoded once per revision, and kept for the
    /// next write when `keeping` (not when every row is read).
    func decoded(_ row: Row, keeping: Bool = true) throws(StoreError) -> StoredCarousel {
        let definition = try definitions.definition(
            serial: row.serial, revision: row.revision, name: row.name, text: row.definition, store: path,
            keeping: keeping)
        return StoredCarousel(
            definition: definition, revision: row.revision, anchor: row.anchor.anchor, serial: row.serial)
    }

    /// A row of `carousels` as read.
    struct Row {
        let serial: Int64
        let name: String
        let definition: String
        let revision: UInt64
        let anchor: AnchorColumns
    }
}
