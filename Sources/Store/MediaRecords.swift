import TimeZones

/// An image of the media library as a store keeps it (docs/MEDIA.md), without its bytes.
public struct MediaRecord: Sendable, Equatable {
    /// The SHA-256 of the file as uploaded, in hexadecimal.
    public let id: String
    /// The original's media type (`image/jpeg`).
    public let type: String
    /// Upright, as it is shown.
    public let width: Int
    public let height: Int
    /// The stored original's size (its metadata removed).
    public let bytes: Int
    /// The WebP variants, narrowest first.
    public let variants: [Variant]
    public let createdAt: Timestamp

    public struct Variant: Sendable, Equatable {
        public let width: Int
        public let bytes: Int

        public init(width: Int, bytes: Int) {
            self.width = width
            self.bytes = bytes
        }
    }

    public init(
        id: String, type: String, width: Int, height: Int, bytes: Int, variants: [Variant], createdAt: Timestamp
    ) {
        self.id = id
        self.type = type
        self.width = width
        self.height = height
        self.bytes = bytes
        self.variants = variants
        self.createdAt = createdAt
    }
}

/// An image to store: its record's fields and every file's bytes.
public struct NewMedia: Sendable {
    public let id: String
    public let type: String
    public let width: Int
    public let height: Int
    public let original: [UInt8]
    /// Width → WebP bytes.
    public let variants: [(width: Int, webp: [UInt8])]
    public let createdAt: Timestamp

    public init(
        id: String, type: String, width: Int, height: Int, original: [UInt8], variants: [(width: Int, webp: [UInt8])],
        createdAt: Timestamp
    ) {
        self.id = id
        self.type = type
        self.width = width
        self.height = height
        self.original = original
        self.variants = variants.sorted { $0.width < $1.width }
        self.createdAt = createdAt
    }

    /// The record a store lists for it.
    public var record: MediaRecord {
        MediaRecord(
            id: id, type: type, width: width, height: height, bytes: original.count,
            variants: variants.map { MediaRecord.Variant(width: $0.width, bytes: $0.webp.count) }, createdAt: createdAt)
    }
}

/// Which file of an image: the original, or the WebP variant of a width.
public enum MediaFile: Sendable, Hashable {
    case original
    case variant(width: Int)

    /// The width a store keeps the file under: 0 for the original.
    public var storedWidth: Int {
        switch self {
        case .original: 0
        case .variant(let width): width
        }
    }
}

/// The records of `rows` — (record fields, file width, file size), ordered by image then width,
/// width 0 being the original — as the SQL stores read them back.
public func mediaRecords(
    fromRows rows: [(id: String, type: String, width: Int, height: Int, createdAt: Timestamp, file: Int, size: Int)]
) -> [MediaRecord] {
    var records: [MediaRecord] = []
    var index = rows.startIndex
    while index < rows.endIndex {
        let first = rows[index]
        var original = 0
        var variants: [MediaRecord.Variant] = []
        while index < rows.endIndex && rows[index].id == first.id {
            if rows[index].file == 0 {
                original = rows[index].size
            } else {
                variants.append(MediaRecord.Variant(width: rows[index].file, bytes: rows[index].size))
            }
            index += 1
        }
        records.append(
            MediaRecord(
                id: first.id, type: first.type, width: first.width, height: first.height, bytes: original,
                variants: variants, createdAt: first.createdAt))
    }
    return records
}

/// The media library (docs/MEDIA.md).
public protocol MediaStore: AnyObject, Sendable {
    /// The media library (docs/MEDIA.md): stores `media` — its record and every file — in one
    /// transaction, durable (synced) before it returns. False when an image of that id is stored
    /// already (then nothing changes: the id is the content's digest).
    /// The audit log keeps the upload, by `attribution`.
    func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool

    /// Every image's record, oldest first; `id`'s alone (or none) when given.
    func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord]

    /// The bytes of one file of an image; nil when there is no such image or file.
    func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]?

    /// Deletes the image and its files, unless a stored carousel's banner shows it (read in the
    /// same transaction: a write bringing the image in at the same moment either comes first
    /// and is seen, or comes after and finds it gone). Durable before it returns; the audit log
    /// keeps a deletion, by `attribution`.
    func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion
}

extension MediaStore {
    /// Every image's record, oldest first.
    public func mediaRecords() throws(StoreError) -> [MediaRecord] { try mediaRecords(id: nil) }

    /// The record of image `id`; nil when there is none.
    public func mediaRecord(_ id: String) throws(StoreError) -> MediaRecord? { try mediaRecords(id: id).first }
}
