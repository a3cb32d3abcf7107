import Carousel
import MicroHTTP
import TimeZones

/// `GET /time`: `{"epochMillis": 1764484800123.456}`, the clock the carousels run on, to the
/// microsecond. Screens estimate their offset to it from a few exchanges and flip at
/// `nextAdvanceAt` on it (docs/SCREENS.md). Never cached: a stored copy is a wrong clock.
enum ServiceTime {
    static func response(at now: Timestamp, headers: [HTTPHeader]) -> Response {
        Response(
            status: 200,
            headers: [PreparedReads.jsonContentType, HTTPHeader("Cache-Control", "no-store"), timingAllowed] + headers,
            body: Array("{\"epochMillis\":\(epochMillis(now))}\n".utf8))
    }

    /// Lets pages of any origin read when this answer left and arrived (Resource Timing): a page
    /// times the exchange by its network stack, not by its main thread, which may be busy.
    static let timingAllowed = HTTPHeader("Timing-Allow-Origin", "*")

    /// Milliseconds with three decimals, written from the integer nanoseconds (no rounding
    /// through a Double, which would print `…123.45600000001`).
    static func epochMillis(_ time: Timestamp) -> String {
        let microseconds = time.nanosecondsSinceEpoch / 1_000
        return "\(microseconds / 1_000).\(padded(microseconds % 1_000, 3))"
    }
}
