import Carousel
import JSON
import MicroHTTP
import TimeZones

/// `GET /carousels/{name}/timeline?limit=N` (docs/SCHEDULES.md): the changes planned from now if
/// no command intervenes, `{"entries": [{"at", "banner", "index", "count"}, …]}`. Computed per
/// request from the published state, with the engine's clock: the same steps the engine takes.
enum TimelineView {
    static let defaultLimit = 100

    /// `limit` as given in the query, or the default.
    static func limit(_ given: String?) throws(Problem) -> Int {
        guard let given else { return defaultLimit }
        guard let value = Int(given), (1...Carousel.timelineLimit).contains(value) else {
            throw Problem.unprocessable(
                "limit: '\(given)' is not a number of entries from 1 to \(Carousel.timelineLimit)")
        }
        return value
    }

    static func response(of entries: [TimelineEntry], headers: [HTTPHeader]) -> Response {
        var document = JSONObject()
        document.add(
            "entries",
            entries.map { entry in
                var object = JSONObject()
                object.add("at", entry.at.rfc3339)
                object.add("banner", entry.banner?.id)
                object.add("index", entry.index)
                object.add("count", entry.count)
                return object
            })
        return Response(
            status: 200, headers: ReadViews.jsonHeaders + headers, body: document.bytes + [UInt8(ascii: "\n")])
    }
}
