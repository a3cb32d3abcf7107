import Carousel
import Definitions
import Digest
import Media
import Store
import Threading
import TimeZones

/// How uploads are limited and decoded (docs/MEDIA.md, docs/CONFIGURATION.md).
public struct MediaSettings: Sendable, Equatable {
    public var limits = MediaLimits()
    /// Decodes at once (`mediaDecodes`): each keeps one core busy for up to a second or two.
    public var decodes = 1
    /// Uploads that may wait for a decode beyond those; more are answered 503.
    public var waiting = 8

    public init() {}
}

/// What the service knows of the library's images, by id: what pages are told of a banner whose
/// image is one (its variants, for `srcset`). Filled by uploads, and from the store on a miss
/// (an image another replica stored).
public final class MediaIndex: Sendable {
    private let records = Lock([String: MediaRecord]())
    private let store: any CarouselStore

    public init(store: any CarouselStore) { self.store = store }

    /// The record of `id`; read from the store when not known here (nil when it has none, or
    /// cannot be reached).
    public func record(_ id: String) -> MediaRecord? {
        if let known = known(id) { return known }
        return try? stored(id, in: store)
    }

    /// The record of `id` if this service has seen it (no store read).
    public func known(_ id: String) -> MediaRecord? { records.withLock { $0[id] } }

    /// The record of `id` as `store` has it now (nil when it has none), remembered. The library
    /// asks through its timed store; a miss while building a prepared read, through the plain one.
    func stored(_ id: String, in store: any CarouselStore) throws(StoreError) -> MediaRecord? {
        let found = try store.mediaRecord(id)
        if let found { remember(found) }
        return found
    }

    func remember(_ record: MediaRecord) { records.withLock { $0[record.id] = record } }

    func forget(_ id: String) { records.withLock { _ = $0.removeValue(forKey: id) } }

    /// `srcset` for a banner's image (docs/MEDIA.md): the variants and the original, each with its
    /// width; nil when the image is not a library image this service knows.
    public func sourceSet(forImage image: String) -> String? {
        guard let id = MediaReference.id(inImage: image), let record = record(id) else { return nil }
        let variants = record.variants.map { "/media/\(id)/\($0.width).webp \($0.width)w" }
        let original = record.variants.contains { $0.width >= record.width } ? [] : ["/media/\(id) \(record.width)w"]
        return (variants + original).joined(separator: ", ")
    }
}

/// The media library apart from HTTP (docs/MEDIA.md): uploads decoded off the request threads
/// (`DecodeQueue`: bounded, at a lower priority) and stored; which banners use an image; deletion
/// refused while one does.
public final class MediaLibrary: Sendable {
    public let settings: MediaSettings
    public let index: MediaIndex
    private let store: any CarouselStore
    private let decoding: DecodeQueue
    private let clock: @Sendable () -> Timestamp
    /// Every carousel's name and banners, now.
    private let carousels: @Sendable () -> [(name: String, banners: [Banner])]

    public enum Upload: Sendable {
        case created(MediaRecord)
        case existing(MediaRecord)
    }

    public enum UploadFailure: Error, Sendable {
        case refused(MediaRefusal)
        /// As many uploads decode and wait as allowed.
        case busy(pending: Int)
        case store(StoreError)
    }

    public enum DeletionFailure: Error, Sendable {
        case notFound
        case inUse([MediaUse])
        case store(StoreError)
    }

    init(
        store: any CarouselStore, index: MediaIndex, settings: MediaSettings,
        clock: @escaping @Sendable () -> Timestamp,
        carousels: @escaping @Sendable () -> [(name: String, banners: [Banner])]
    ) {
        self.store = store
        self.index = index
        self.settings = settings
        self.clock = clock
        self.carousels = carousels
        decoding = DecodeQueue(workers: settings.decodes, backlog: settings.waiting)
    }

    /// Decodes and stores an upload; an image with the same bytes is the one stored already
    /// (nothing is decoded again). A stored upload is in the audit log as `requester`'s.
    public func upload(_ bytes: [UInt8], declaredType: String?, by requester: Requester) async throws(UploadFailure)
        -> Upload
    {
        let id = bytes.withUnsafeBytes { SHA256.hex(of: $0) }
        if let existing = try stored(id) { return .existing(existing) }
        let limits = settings.limits
        let outcome = await decoding.run { () -> Result<ProcessedImage, MediaRefusal> in
            Result { () throws(MediaRefusal) in
                try MediaProcessing.process(bytes, declaredType: declaredType, limits: limits, id: id)
            }
        }
        guard let outcome else { throw .busy(pending: decoding.pending) }
        let image: ProcessedImage
        do { image = try outcome.get() } catch { throw .refused(error) }
        let media = NewMedia(
            id: image.id, type: image.format.mediaType, width: image.width, height: image.height,
            original: image.original, variants: image.variants.map { ($0.width, $0.webp) }, createdAt: clock())
        let created: Bool
        do {
            created = try store.saveMedia(media, by: Attribution(by: requester, at: media.createdAt))
        } catch {
            throw .store(error)
        }
        guard created else {  // another upload of the same bytes was stored first
            guard let existing = try stored(id) else { throw .store(.unavailable("media \(id) vanished")) }
            return .existing(existing)
        }
        index.remember(media.record)
        return .created(media.record)
    }

    private func stored(_ id: String) throws(UploadFailure) -> MediaRecord? {
        do { return try index.stored(id, in: store) } catch { throw .store(error) }
    }

    /// The record of image `id`: known here, else read from the store; nil when it has none.
    public func record(_ id: String) throws(StoreError) -> MediaRecord? {
        if let known = index.known(id) { return known }
        return try index.stored(id, in: store)
    }

    /// Every image, oldest first.
    public func records() throws(StoreError) -> [MediaRecord] {
        let records = try store.mediaRecords()
        for record in records { index.remember(record) }
        return records
    }

    /// The banners that show each image, by id.
    public func uses() -> [String: [MediaUse]] {
        var uses: [String: [MediaUse]] = [:]
        for carousel in carousels() {
            for banner in carousel.banners {
                if let id = MediaReference.id(inImage: banner.image) {
                    uses[id, default: []].append(MediaUse(carousel: carousel.name, banner: banner.id))
                }
            }
        }
        return uses
    }

    /// One file's bytes; nil when there is no such image or file.
    public func bytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        try store.mediaBytes(of: id, file)
    }

    /// Deletes an image no banner uses: the store reads the uses in the deletion's transaction,
    /// where every replica's writes are (docs/MEDIA.md). In the audit log as `requester`'s.
    public func delete(_ id: String, by requester: Requester) throws(DeletionFailure) {
        let deletion: MediaDeletion
        do {
            deletion = try store.deleteMedia(id, by: Attribution(by: requester, at: clock()))
        } catch {
            throw .store(error)
        }
        switch deletion {
        case .deleted: index.forget(id)
        case .notFound: throw .notFound
        case .inUse(let uses): throw .inUse(uses)
        }
    }

    /// Ends the decoding threads; uploads waiting are answered as if the queue were full.
    func stop() { decoding.stop() }
}
