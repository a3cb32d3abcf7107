import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: MediaStore {
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
    static func missingImages(_ ids: [String], in connection: SQLiteConnection) throws(SQLiteError)
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
}
