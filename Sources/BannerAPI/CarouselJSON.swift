import Carousel
import Definitions
import JSON

/// The API's JSON documents (docs/API.md), fields in the documented order.
enum CarouselJSON {
    /// `GET /banner` and the answer of every command.
    static func state(_ carousel: Carousel, banners: EncodedBanners) -> [UInt8] {
        var object = JSONObject()
        object.add("index", carousel.index)
        object.add("count", carousel.count)
        object.add("banner", carousel.index.map { banners.encoded[$0] })
        object.add("previous", carousel.previousIndex.map { banners.encoded[$0] })
        object.add("next", carousel.nextIndex.map { banners.encoded[$0] })
        object.add("paused", carousel.isPaused)
        object.add("pausedUntil", carousel.pausedUntil?.rfc3339)
        object.add("interval", carousel.currentInterval.seconds)
        object.add("nextAdvanceAt", carousel.nextAdvanceAt?.rfc3339)
        object.add("version", carousel.version)
        return object.bytes + [UInt8(ascii: "\n")]
    }

    /// `GET /banners`
    static func banners(_ carousel: Carousel, banners: EncodedBanners) -> [UInt8] {
        var object = JSONObject()
        object.add("banners", banners.encoded)
        object.add("count", carousel.count)
        object.add("version", carousel.version)
        return object.bytes + [UInt8(ascii: "\n")]
    }

    /// `GET /banner/index`
    static func index(_ carousel: Carousel) -> [UInt8] {
        var object = JSONObject()
        object.add("index", carousel.index)
        object.add("count", carousel.count)
        return object.bytes + [UInt8(ascii: "\n")]
    }

}

/// A carousel's banners, each encoded once: states are re-encoded on every change, the banners
/// in them (URLs, captions) only when the list itself changes.
struct EncodedBanners: Sendable {
    let banners: [Banner]
    let encoded: [EncodedJSON]

    init(_ banners: [Banner]) {
        self.banners = banners
        encoded = banners.map { EncodedJSON(BannerDecoding.json($0).bytes) }
    }

    /// These, when they still encode `banners` (an O(1) check while the list is unchanged),
    /// else a fresh encoding.
    func reused(for banners: [Banner]) -> EncodedBanners {
        self.banners == banners ? self : EncodedBanners(banners)
    }
}
