import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: MediaStore {
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
    static func missingImages(_ ids: [String], on connection: PostgresConnection) throws(PostgresError)
        -> [String]
    {
        guard !ids.isEmpty else { return [] }
        // Ids are 64 hexadecimal digits (MediaReference.isID): an array literal needs no quoting.
        let rows = try connection.execute(
            "SELECT id FROM media WHERE id = ANY($1::text[]) FOR SHARE", ["{" + ids.joined(separator: ",") + "}"])
        let found = Set(rows.compactMap { $0.first ?? nil })
        return ids.filter { !found.contains($0) }
    }
}
