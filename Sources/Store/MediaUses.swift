import Definitions

/// A banner that shows an image of the media library.
public struct MediaUse: Sendable, Equatable {
    public let carousel: String
    public let banner: String

    public init(carousel: String, banner: String) {
        self.carousel = carousel
        self.banner = banner
    }
}

/// What `CarouselStore.deleteMedia` did.
public enum MediaDeletion: Sendable, Equatable {
    case deleted
    case notFound
    /// Nothing deleted: these banners of stored carousels show the image.
    case inUse([MediaUse])
}

/// Which library images a definition shows (docs/MEDIA.md, "Deleting"): a store checks them in
/// the transaction of each write and of each deletion, so that no banner is left naming an image
/// another writer deleted meanwhile, whichever process it was.
extension CarouselDefinition {
    /// The ids of the library images its banners show.
    public var libraryImages: Set<String> {
        Set(banners.compactMap { MediaReference.id(inImage: $0.image) })
    }

    /// The library images it shows that `previous` did not, sorted: the ones a write must find in
    /// the library. Those the carousel showed already are not asked for again, so that a carousel
    /// seeded with an image the library lacks can still be edited.
    public func libraryImages(broughtInOver previous: CarouselDefinition?) -> [String] {
        libraryImages.subtracting(previous?.libraryImages ?? []).sorted()
    }

    /// Its banners that show image `id`.
    public func uses(ofImage id: String) -> [MediaUse] {
        banners.filter { MediaReference.id(inImage: $0.image) == id }.map {
            MediaUse(carousel: name, banner: $0.id)
        }
    }
}
