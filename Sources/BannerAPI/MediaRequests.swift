import CarouselRuntime
import Definitions
import JSON
import Media
import MicroHTTP
import Store
import Threading
import TimeZones

/// The media library over HTTP (docs/API.md, Media): uploads checked on the request thread as
/// far as that costs nothing (size, signature, header), then decoded and stored off it; files
/// served from pre-built responses kept in memory (`MediaFiles`), read from the store once.
enum MediaRequests {
    /// The image of a `POST /media`: the body itself (an image type or application/octet-stream)
    /// or the one file of a multipart form, and the type it was declared as.
    static func upload(of request: borrowing Request) throws(Problem) -> (bytes: [UInt8], declaredType: String?) {
        let contentType = request.header("Content-Type") ?? ""
        if let boundary = MultipartFile.boundary(ofContentType: contentType) {
            let file = try MultipartFile.parse(request.body, boundary: boundary)
            return (file.bytes, file.contentType.flatMap(imageType))
        }
        let type = CommandBody.mediaType(of: contentType)
        guard type.hasPrefix("image/") || type == "application/octet-stream" else {
            throw Problem(
                status: 415,
                detail: "send the image as the body with its type (Content-Type: image/jpeg, image/png, image/webp, "
                    + "image/gif or image/avif) or as multipart/form-data; '\(contentType)' is neither")
        }
        return (request.body, imageType(type))
    }

    /// `image/…` as declared, or nil for a type that says nothing of the format.
    private static func imageType(_ type: String) -> String? {
        let bare = CommandBody.mediaType(of: type)
        return bare.hasPrefix("image/") ? bare : nil
    }

    /// A banner may name only images the library has (docs/MEDIA.md): each library image
    /// `definition` shows that `earlier` (the definition it revises) did not must be in `index`
    /// (`rememberImages` looked them up first), else a 422 names the banner's field. Images named
    /// before are let be: an edit elsewhere in the carousel is not refused for them. Reads no
    /// store: it runs inside the store's change.
    static func checkLibraryImages(
        of definition: CarouselDefinition, besides earlier: CarouselDefinition?, in index: MediaIndex
    ) throws(Problem) {
        let before = earlier?.libraryImages ?? []
        for (position, banner) in definition.banners.enumerated() {
            guard let id = MediaReference.id(inImage: banner.image), !before.contains(id), index.known(id) == nil
            else { continue }
            throw Problem.unprocessable(
                "banners[\(position)].image: the media library has no image \(id); upload it first "
                    + "(POST /media), or pick one of GET /media")
        }
    }

    /// Looks up in the store, before a change, the library images `change` names, so that
    /// `checkLibraryImages` finds those the library has (another replica's uploads too).
    static func rememberImages(named change: AdminRequest, in library: MediaLibrary) throws(Problem) {
        for id in Set(change.namedImages.compactMap(MediaReference.id(inImage:))) {
            do throws(StoreError) { _ = try library.record(id) } catch { throw Problem.store(error) }
        }
    }

    static func problem(_ refusal: MediaRefusal) -> Problem {
        Problem(status: refusal.status, detail: refusal.message)
    }

    /// `{"id", "type", "width", "height", "bytes", "url", "variants": [...], "usedBy": [...], "createdAt"}`.
    static func json(_ record: MediaRecord, usedBy: [MediaUse]) -> JSONObject {
        var object = JSONObject()
        object.add("id", record.id)
        object.add("type", record.type)
        object.add("width", record.width)
        object.add("height", record.height)
        object.add("bytes", record.bytes)
        object.add("url", "/media/\(record.id)")
        object.add(
            "variants",
            record.variants.map { variant in
                var entry = JSONObject()
                entry.add("width", variant.width)
                entry.add("type", "image/webp")
                entry.add("url", "/media/\(record.id)/\(variant.width).webp")
                entry.add("bytes", variant.bytes)
                return entry
            })
        object.add(
            "usedBy",
            usedBy.map { use in
                var entry = JSONObject()
                entry.add("carousel", use.carousel)
                entry.add("banner", use.banner)
                return entry
            })
        object.add("createdAt", record.createdAt.rfc3339)
        return object
    }

    /// `GET /media`: every image, oldest first, with the banners that show it.
    static func list(_ records: [MediaRecord], uses: [String: [MediaUse]]) -> PreparedResponse {
        var object = JSONObject()
        object.add("media", records.map { json($0, usedBy: uses[$0.id] ?? []) })
        return PreparedReads.uncached(object)
    }
}

/// Which file a `GET /media/…` asks for, with its validators: what a deferred read needs once the
/// request is gone.
struct MediaFileRequest: Sendable {
    let id: String
    let file: MediaFile
    let ifNoneMatch: String?
    let range: String?
    let ifRange: String?

    /// The path asked for, for messages.
    var path: String {
        switch file {
        case .original: "/media/\(id)"
        case .variant(let width): "/media/\(id)/\(width).webp"
        }
    }

    init(id: String, file: MediaFile, request: borrowing Request) {
        self.id = id
        self.file = file
        ifNoneMatch = request.header("If-None-Match")
        range = request.header("Range")
        ifRange = request.header("If-Range")
    }
}

/// The files of the library as pre-built responses (docs/MEDIA.md, serving): each read from the
/// store once, then queued by libmicrohttpd or written by a read loop from memory like any read —
/// no copy per request. Kept up to `budget` bytes, the least recently asked for dropped first.
final class MediaFiles: Sendable {
    private let cache = Lock(Cache())
    let budget: Int

    private struct Cache {
        var entries: [MediaFileKey: Entry] = [:]
        var bytes = 0
        var clock = 0
    }

    private struct Entry {
        let file: Representation
        var lastUsed: Int
    }

    private struct MediaFileKey: Hashable {
        let id: String
        let file: MediaFile
    }

    init(budget: Int = 64 << 20) { self.budget = budget }

    /// Immutable: the id is the content's digest and a variant never changes once made.
    static let caching = HTTPHeader("Cache-Control", "public, max-age=31536000, immutable")

    static func etag(_ id: String, _ file: MediaFile) -> String {
        switch file {
        case .original: "\"\(id)\""
        case .variant(let width): "\"\(id)-\(width)\""
        }
    }

    /// The answer from memory; nil when the file must first be read from the store.
    func answer(_ request: MediaFileRequest) -> PreparedResponse? {
        let representation = cache.withLock { cache -> Representation? in
            let key = MediaFileKey(id: request.id, file: request.file)
            guard var entry = cache.entries[key] else { return nil }
            cache.clock += 1
            entry.lastUsed = cache.clock
            cache.entries[key] = entry
            return entry.file
        }
        return representation.map { Self.answer(request, from: $0) }
    }

    /// Keeps `bytes` as the file's responses and answers from them.
    func keep(_ bytes: [UInt8], type: String, for request: MediaFileRequest) -> PreparedResponse {
        let representation = Representation(
            etag: Self.etag(request.id, request.file), body: bytes,
            headers: [
                HTTPHeader("Content-Type", type), Self.caching, HTTPHeader("Accept-Ranges", "bytes"),
                HTTPHeader("X-Content-Type-Options", "nosniff"),
                // An image opened on its own: nothing in it may run or load anything.
                HTTPHeader("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox"),
            ], storage: .file)
        cache.withLock { cache in
            let key = MediaFileKey(id: request.id, file: request.file)
            guard bytes.count <= budget, cache.entries[key] == nil else { return }
            cache.clock += 1
            cache.entries[key] = Entry(file: representation, lastUsed: cache.clock)
            cache.bytes += bytes.count
            while cache.bytes > budget, let oldest = cache.entries.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
                cache.bytes -= oldest.value.file.ok.bodyCount
                cache.entries.removeValue(forKey: oldest.key)
            }
        }
        return Self.answer(request, from: representation)
    }

    /// Forgets every file of `id` (deleted).
    func forget(_ id: String) {
        cache.withLock { cache in
            for key in cache.entries.keys where key.id == id {
                cache.bytes -= cache.entries[key]!.file.ok.bodyCount
                cache.entries.removeValue(forKey: key)
            }
        }
    }

    /// 304 when the client has it; 206 for one satisfiable byte range (when `If-Range`, if
    /// any, names this file); 416 for a range past the end; else the whole file.
    private static func answer(_ request: MediaFileRequest, from file: Representation) -> PreparedResponse {
        if let ifNoneMatch = request.ifNoneMatch, EntityTag.matches(ifNoneMatch, file.etag) { return file.notModified }
        guard let range = request.range, request.ifRange == nil || request.ifRange == file.etag else { return file.ok }
        let length = file.ok.bodyCount
        switch ByteRange.parse(range, length: length) {
        case .none: return file.ok
        case .unsatisfiable:
            let problem = Problem(
                status: 416, detail: "the file has \(length) bytes; '\(range)' asks for none of them",
                headers: [HTTPHeader("Content-Range", "bytes */\(length)")])
            return PreparedResponse(problem.response)
        case .bytes(let bounds):
            let headers =
                file.ok.headers.filter { $0.name != "Content-Length" } + [
                    HTTPHeader("Content-Range", "bytes \(bounds.lowerBound)-\(bounds.upperBound - 1)/\(length)")
                ]
            return PreparedResponse(Response(status: 206, headers: headers, body: file.ok.body(in: bounds)))
        }
    }
}

/// A `Range` header's one byte range (RFC 9110 §14.1.2), resolved against a length.
enum ByteRange: Equatable {
    /// No range to honour (absent, not bytes, several ranges, or not readable): the whole file.
    case none
    /// Bytes, but none within the file: 416.
    case unsatisfiable
    case bytes(Range<Int>)

    static func parse(_ header: String, length: Int) -> ByteRange {
        let text = header.trimmingCharacters(in: " \t")
        guard text.lowercased().hasPrefix("bytes="), !text.contains(",") else { return .none }
        let spec = String(text.dropFirst("bytes=".count)).trimmingCharacters(in: " \t")
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2, parts.allSatisfy({ $0.utf8.allSatisfy { (48...57).contains($0) } }) else {
            return .none
        }
        let first: Int? = parts[0].isEmpty ? nil : Int(parts[0])
        let last: Int? = parts[1].isEmpty ? nil : Int(parts[1])
        switch (first, last) {
        case (let first?, let last):
            if let last, last < first { return .none }
            guard first < length else { return .unsatisfiable }
            return .bytes(first..<min(length, (last ?? length - 1) + 1))
        case (nil, let suffix?):
            guard suffix > 0, length > 0 else { return .unsatisfiable }
            return .bytes(max(0, length - suffix)..<length)
        default:
            return .none
        }
    }
}
