import Carousel
import Definitions
import JSON
import TimeZones

/// The API's JSON documents (docs/API.md), fields in the documented order.
enum CarouselJSON {
    /// `GET /banner` and the answer of every command.
    static func state(_ carousel: Carousel, banners: EncodedBanners) -> [UInt8] {
        var object = JSONObject(reservingCapacity: 2048)
        object.add("index", carousel.index)
        object.add("count", carousel.count)
        let shown = carousel.takeover.map { EncodedJSON(BannerDecoding.json($0.banner).bytes) }
        object.add("banner", shown ?? carousel.shownPosition.map { banners.encoded[$0] })
        object.add("previous", carousel.previousPosition.map { banners.encoded[$0] })
        object.add("next", carousel.nextPosition.map { banners.encoded[$0] })
        object.add("paused", carousel.isPaused)
        object.add("pausedUntil", carousel.pausedUntil?.rfc3339)
        object.add("interval", carousel.currentInterval.seconds)
        object.add("nextAdvanceAt", carousel.nextAdvanceAt?.rfc3339)
        object.add("version", carousel.version)
        // v2 (docs/SCHEDULES.md): what rotates, and the takeover that holds every screen.
        object.add("rotation", carousel.rotationIDs)
        object.add("takeover", carousel.takeover.map(takeover))
        return object.line
    }

    /// `{"banner": id, "until": time|null}`
    static func takeover(_ takeover: Carousel.Takeover) -> JSONObject {
        var object = JSONObject()
        object.add("banner", takeover.banner.id)
        object.add("until", takeover.until?.rfc3339)
        return object
    }

    /// `GET /banners`: every banner, each marked `active` when it rotates now, with its `share` of
    /// the rotation's turns (docs/WEIGHTS.md).
    static func banners(_ carousel: Carousel, banners: EncodedBanners) -> [UInt8] {
        var object = JSONObject()
        let shares = carousel.shares
        object.add(
            "banners",
            banners.objects.indices.map { position in
                var listed = banners.objects[position]
                listed.add("active", shares[position] != nil)
                listed.add("share", shares[position].map(Self.share) ?? 0)
                return listed
            })
        object.add("count", carousel.count)
        object.add("version", carousel.version)
        return object.line
    }

    /// A share as written: four decimals (`0.3333`); 1 and 0 as `1.0` and `0.0`.
    static func share(_ share: Double) -> Double {
        (share * 10_000).rounded() / 10_000
    }

    /// `GET /banner/index`
    static func index(_ carousel: Carousel) -> [UInt8] {
        var object = JSONObject()
        object.add("index", carousel.index)
        object.add("count", carousel.count)
        return object.line
    }

}

/// A carousel's banners, each encoded once: states are re-encoded on every change, the banners
/// in them (URLs, captions) only when the list itself changes.
struct EncodedBanners: Sendable {
    let banners: [Banner]
    /// `srcset` for an image of the media library (docs/MEDIA.md); nil for any other image.
    let sourceSet: @Sendable (String) -> String?
    let encoded: [EncodedJSON]
    /// Their fields, for `GET /banners` to add `active` and `share` to.
    let objects: [JSONObject]

    init(_ banners: [Banner], sourceSet: @escaping @Sendable (String) -> String? = { _ in nil }) {
        self.banners = banners
        self.sourceSet = sourceSet
        // Each banner's fields are built once; the listed forms add `active` to a copy. A library
        // image's variants go with it, for pages to pick one (`srcset`).
        let objects = banners.map { banner in
            var object = BannerDecoding.json(banner)
            if let sourceSet = sourceSet(banner.image) { object.add("srcset", sourceSet) }
            return object
        }
        encoded = objects.map { EncodedJSON($0.bytes) }
        self.objects = objects
    }

    /// These, when they still encode `banners` (an O(1) check while the list is unchanged),
    /// else a fresh encoding.
    func reused(for banners: [Banner]) -> EncodedBanners {
        self.banners == banners ? self : EncodedBanners(banners, sourceSet: sourceSet)
    }
}
