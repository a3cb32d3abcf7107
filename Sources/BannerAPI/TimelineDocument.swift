import Carousel
import Definitions
import JSON
import MicroHTTP
import TimeZones

/// `GET /carousels/{name}/timeline?limit=N&hours=H` (docs/SCHEDULES.md): the changes planned from
/// now if no command intervenes, `{"entries": [{"at", "banner", "index", "count"}, …]}`; with
/// `hours`, those of the next H hours and `"until"`, the instant before which every change is
/// listed (what a screen plays from when it loses the service). Computed per request from the
/// published state, with the engine's clock: the same steps the engine takes, and the scheduled
/// changes made on the way (docs/SCHEDULED.md).
enum TimelineDocument {
    static let defaultLimit = 100
    static let maxHours = 24.0

    /// `hours` as given in the query (more than 0, at most 24, fractions allowed), or nil.
    static func span(_ given: String?) throws(Problem) -> Duration? {
        guard let given else { return nil }
        guard let hours = Double(given), hours.isFinite, hours > 0, hours <= maxHours else {
            throw Problem.unprocessable("hours: '\(given)' is not a number of hours, more than 0 and at most 24")
        }
        return .milliseconds(Int64((hours * 3_600_000).rounded()))
    }

    /// `limit` as given in the query, or the default: 100, or as many as a timeline gives when
    /// `hours` bounds it.
    static func limit(_ given: String?, spanGiven: Bool) throws(Problem) -> Int {
        guard let given else { return spanGiven ? Carousel.timelineLimit : defaultLimit }
        guard let value = Int(given), (1...Carousel.timelineLimit).contains(value) else {
            throw Problem.unprocessable(
                "limit: '\(given)' is not a number of entries from 1 to \(Carousel.timelineLimit)")
        }
        return value
    }

    /// A preview's `at` (docs/AUDIENCES.md): an RFC 3339 date-time from `now` to
    /// `Carousel.planHorizon` ahead.
    static func instant(_ given: String?, now: Timestamp) throws(Problem) -> Timestamp {
        guard let given else {
            throw Problem.badRequest("at: missing; give the instant to preview, like 2026-12-12T10:00:00+01:00")
        }
        guard let at = try QueryValues.time(given, name: "at") else { preconditionFailure("given") }
        guard at >= now, at <= now + Carousel.planHorizon else {
            throw Problem.unprocessable(
                "at: \(given) is not between now (\(now.rfc3339)) and two years ahead; a preview shows the future")
        }
        return at
    }

    /// `GET …/preview`: the state planned, as `GET …/banner` writes a state (without `srcset`).
    static func preview(_ state: Carousel, headers: [HTTPHeader]) -> Response {
        Response(
            status: 200, headers: PreparedReads.jsonHeaders + headers,
            body: CarouselJSON.state(state, banners: EncodedBanners(state.banners)))
    }

    /// The answer: each entry's banner by id, with its content (`BannerDecoding.json`) where it
    /// is not as `listed` (the definition now, `GET …/banners`) has it: a banner a scheduled change
    /// adds or edits, or a takeover's. An entry a scheduled change makes names it (`change`).
    static func response(of entries: [TimelineEntry], until: Timestamp?, listed: [Banner], headers: [HTTPHeader])
        -> Response
    {
        let current = Dictionary(listed.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var document = JSONObject()
        document.add(
            "entries",
            entries.map { entry in
                var object = JSONObject()
                object.add("at", entry.at.rfc3339)
                object.add("banner", entry.banner?.id)
                object.add("index", entry.index)
                object.add("count", entry.count)
                if let change = entry.change { object.add("change", change) }
                if let banner = entry.banner, current[banner.id] != banner {
                    object.add("content", BannerDecoding.json(banner))
                }
                return object
            })
        if let until { document.add("until", until.rfc3339) }
        return Response(
            status: 200, headers: PreparedReads.jsonHeaders + headers, body: document.line)
    }
}
