import Carousel
import MicroHTTP
import Synchronization

/// The read endpoints' responses for the latest carousel state, built once per change (inside
/// the engine, before the command that caused it returns) and queued as they are by every read.
/// A read takes one lock to copy one reference: no encoding, no allocation, no `await`.
final class ReadViews: Sendable {
    struct Views: Sendable {
        let state: PreparedResponse
        let banners: PreparedResponse
        let index: PreparedResponse
    }

    private let latest: Mutex<Views>

    init(initial carousel: Carousel) {
        latest = Mutex(Self.views(of: carousel))
    }

    var state: PreparedResponse { latest.withLock { $0.state } }
    var banners: PreparedResponse { latest.withLock { $0.banners } }
    var index: PreparedResponse { latest.withLock { $0.index } }

    /// Called by the engine with every new state.
    func publish(_ carousel: Carousel) {
        let views = Self.views(of: carousel)
        latest.withLock { $0 = views }
    }

    private static func views(of carousel: Carousel) -> Views {
        Views(
            state: prepare(CarouselJSON.state(carousel)),
            banners: prepare(CarouselJSON.banners(carousel)),
            index: prepare(CarouselJSON.index(carousel)))
    }

    static func prepare(_ json: [UInt8], status: Int = 200) -> PreparedResponse {
        PreparedResponse(jsonResponse(json, status: status))
    }

    static func jsonResponse(_ json: [UInt8], status: Int = 200) -> Response {
        Response(
            status: status,
            headers: [
                HTTPHeader("Content-Type", "application/json; charset=utf-8"),
                // Every client must see the same banner now; no cache may keep an old one.
                HTTPHeader("Cache-Control", "no-store"),
            ], body: json)
    }
}
