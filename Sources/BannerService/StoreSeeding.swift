import Carousel
import Definitions
import Media
import Store
import TimeZones

/// Writing definitions into a store from outside the API: the first start on an empty store
/// (seeding from the configuration) and `banner-server import`.
public enum StoreSeeding {
    /// Writes `definitions` in one transaction: each replaces the carousel of its name (whose
    /// state follows as after an admin edit) or creates it (showing its first banner from `now`).
    public static func importDefinitions(
        _ definitions: [CarouselDefinition], images: [LibraryFile] = [], into store: any CarouselStore,
        limits: MediaLimits = MediaLimits(), now: Timestamp
    ) throws(StoreError) {
        try keep(images, in: store, limits: limits, by: Attribution(actor: "import", at: now))
        try store.importDefinitions(
            definitions,
            anchor: { definition, existing in
                guard let existing else { return definition.newCarousel(at: now).anchor }
                var carousel = existing.definition.carousel(at: existing.anchor)
                definition.redefine(&carousel, from: existing.definition, at: now)
                return carousel.anchor
            }, by: Attribution(actor: "import", at: now))
    }

    /// The carousels of `store`, after importing `definitions` when it holds none. The second
    /// value names the carousels whose stored definition differs from `definitions` (the store
    /// is the truth once seeded).
    public static func load(
        _ store: any CarouselStore, seeding definitions: [CarouselDefinition], images: [LibraryFile] = [],
        limits: MediaLimits = MediaLimits(), now: Timestamp
    ) throws(StoreError) -> (carousels: [StoredCarousel], seeded: Bool, differing: [String]) {
        // The images first: a carousel that shows one is refused until it is in the library. Only
        // into an empty store: an operator may delete them later, and a restart must not bring
        // them back.
        if !images.isEmpty, try store.loadAll().isEmpty {
            try keep(images, in: store, limits: limits, by: Attribution(actor: "seed", at: now))
        }
        let seeded = try store.seed(
            definitions, anchor: { $0.newCarousel(at: now).anchor }, by: Attribution(actor: "seed", at: now))
        let stored = try store.loadAll()
        let differing =
            seeded
            ? []
            : definitions.filter { definition in
                stored.first { $0.name == definition.name }?.definition != definition
            }.map(\.name)
        return (stored, seeded, differing)
    }

    /// Decodes each image and keeps it in the library with its variants, as an upload is kept
    /// (one already there is left as it is). An image that does not decode makes the store
    /// unusable for this configuration (exit 2, naming the file).
    static func keep(
        _ images: [LibraryFile], in store: any CarouselStore, limits: MediaLimits, by attribution: Attribution
    )
        throws(StoreError)
    {
        for file in images where try store.mediaRecord(file.id) == nil {
            let image: ProcessedImage
            do {
                image = try MediaProcessing.process(file.bytes, declaredType: nil, limits: limits, id: file.id)
            } catch {
                throw .unusable("\(file.path): \(error.message); give the configuration an image the library takes")
            }
            _ = try store.saveMedia(
                NewMedia(
                    id: image.id, type: image.format.mediaType, width: image.width, height: image.height,
                    original: image.original, variants: image.variants.map { ($0.width, $0.webp) },
                    createdAt: attribution.at),
                by: attribution)
        }
    }

    /// `banner-server export`: every definition as a v2 configuration file.
    public static func export(_ store: any CarouselStore) throws(StoreError) -> [UInt8] {
        CarouselDefinition.configurationFile(try store.loadAll().map(\.definition))
    }
}
