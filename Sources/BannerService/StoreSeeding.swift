import Carousel
import Definitions
import Store
import TimeZones

/// Writing definitions into a store from outside the API: the first start on an empty store
/// (seeding from the configuration) and `banner-server import`.
public enum StoreSeeding {
    /// Writes `definitions` in one transaction: each replaces the carousel of its name (whose
    /// state follows as after an admin edit) or creates it (showing its first banner from `now`).
    public static func importDefinitions(
        _ definitions: [CarouselDefinition], into store: any CarouselStore, now: Timestamp
    ) throws(StoreError) {
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
        _ store: any CarouselStore, seeding definitions: [CarouselDefinition], now: Timestamp
    ) throws(StoreError) -> (carousels: [StoredCarousel], seeded: Bool, differing: [String]) {
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

    /// `banner-server export`: every definition as a v2 configuration file.
    public static func export(_ store: any CarouselStore) throws(StoreError) -> [UInt8] {
        CarouselDefinition.configurationFile(try store.loadAll().map(\.definition))
    }
}
