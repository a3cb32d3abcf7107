import Carousel

/// The API's JSON documents (DESIGN.md §3), fields in the documented order.
enum CarouselJSON {
    /// `GET /banner` and the answer of every command.
    static func state(_ carousel: Carousel) -> [UInt8] {
        var object = JSONObject()
        object.add("index", carousel.index)
        object.add("count", carousel.count)
        object.add("banner", carousel.currentBanner.map(banner))
        object.add("previous", carousel.previousBanner.map(banner))
        object.add("next", carousel.nextBanner.map(banner))
        object.add("paused", carousel.isPaused)
        object.add("pausedUntil", carousel.pausedUntil?.rfc3339)
        object.add("interval", carousel.currentInterval.seconds)
        object.add("nextAdvanceAt", carousel.nextAdvanceAt?.rfc3339)
        object.add("version", carousel.version)
        return object.bytes + [UInt8(ascii: "\n")]
    }

    /// `GET /banners`
    static func banners(_ carousel: Carousel) -> [UInt8] {
        var object = JSONObject()
        object.add("banners", carousel.banners.map(banner))
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

    static func banner(_ banner: Banner) -> JSONObject {
        var object = JSONObject()
        object.add("id", banner.id)
        object.add("image", banner.image)
        object.add("caption", banner.caption)
        object.add("link", banner.link)
        object.add("duration", banner.duration?.seconds)
        return object
    }
}
