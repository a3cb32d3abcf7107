import Carousel
import MicroHTTP
import Synchronization

/// The read endpoints' responses for the latest carousel state, built once per change (inside
/// the engine, before the command that caused it returns) and queued as they are by every read.
/// A read takes one lock to copy one reference: no encoding, no allocation, no `await`.
final class ReadViews: Sendable {
    struct Views: Sendable {
        let version: UInt64
        let encodedBanners: EncodedBanners
        let state: PreparedResponse
        let banners: PreparedResponse
        let index: PreparedResponse
    }

    private let latest: Mutex<Views>

    init(initial carousel: Carousel) {
        latest = Mutex(Self.views(of: carousel, banners: EncodedBanners(carousel.banners)))
    }

    var state: PreparedResponse { latest.withLock { $0.state } }
    var banners: PreparedResponse { latest.withLock { $0.banners } }
    var index: PreparedResponse { latest.withLock { $0.index } }

    /// The state response for `carousel`: the one already published when it is that version
    /// (the usual case for a command's answer), else encoded now.
    func state(of carousel: Carousel) -> PreparedResponse {
        let (published, banners) = latest.withLock {
            ($0.version == carousel.version ? $0.state : nil, $0.encodedBanners)
        }
        return published ?? Self.prepare(CarouselJSON.state(carousel, banners: banners.reused(for: carousel.banners)))
    }

    /// Called by the engine with every new state.
    func publish(_ carousel: Carousel) {
        let banners = latest.withLock { $0.encodedBanners }.reused(for: carousel.banners)
        let views = Self.views(of: carousel, banners: banners)
        latest.withLock { $0 = views }
    }

    private static func views(of carousel: Carousel, banners: EncodedBanners) -> Views {
        Views(
            version: carousel.version,
            encodedBanners: banners,
            state: prepare(CarouselJSON.state(carousel, banners: banners)),
            banners: prepare(CarouselJSON.banners(carousel, banners: banners)),
            index: prepare(CarouselJSON.index(carousel)))
    }

    /// A 200 JSON response, ready to queue.
    static func prepare(_ json: [UInt8]) -> PreparedResponse {
        PreparedResponse(
            Response(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", "application/json; charset=utf-8"),
                    // Every client must see the same banner now; no cache may keep an old one.
                    HTTPHeader("Cache-Control", "no-store"),
                ], body: json))
    }
}
