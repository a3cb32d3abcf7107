import Carousel
import CarouselRuntime
import JSON
import MicroHTTP
import Store
import TimeZones

/// The requests of proof of play (docs/STATS.md): views screens report, clicks, and the stats
/// an operator reads. Each is checked on the calling thread; nothing is counted for a refused one.
enum EngagementRequests {
    /// The most views one request may report.
    static let maximumViews = 100
    /// How far ahead of the service's clock a view may be dated: a screen's estimate of that
    /// clock is off by a few milliseconds (docs/SCREENS.md), never by this much.
    static let viewClockTolerance: Duration = .seconds(5)
    /// How old a view may be: a screen reports within seconds, or when it is next online.
    static let viewMaximumAge: Duration = .seconds(86_400)

    // MARK: POST …/views

    /// `{"views": [{"banner": id, "at": time, "ms": n, "id": text}, …]}`: each view's banner, time
    /// and id (optional: 1 to 64 of a-z, A-Z, 0-9, '.', '_', '-'; a view sent again with its id
    /// counts once), or 400 (not that shape, an id that is not one) or 422 (naming the first entry
    /// that cannot be a view of this carousel: an unknown banner, a time in the future or more than
    /// a day ago).
    ///
    /// Screens send it with `navigator.sendBeacon`, which can only send a text body across
    /// origins without a preflight: `text/plain` is read as JSON too.
    static func views(of request: borrowing Request, state: Carousel, now: Timestamp) throws(Problem)
        -> [ReportedView]
    {
        let document = try CommandBody.document(of: request, alsoAccepting: "text/plain")
        guard let document else {
            throw Problem.badRequest("missing body; send {\"views\": [{\"banner\": id, \"at\": time, \"ms\": n}, …]}")
        }
        let entries = try CommandBody.reading { () throws(FieldError) -> [JSONValue] in
            let fields = try JSONFields(document)
            try fields.rejectUnknown(allowing: ["views"])
            return try fields.required("views", .array)
        }
        guard entries.count <= maximumViews else {
            throw Problem(
                status: 413, detail: "\(entries.count) views in one request; send at most \(maximumViews) a request")
        }
        let known = Set(state.banners.map(\.id) + (state.takeover.map { [$0.banner.id] } ?? []))
        var views: [ReportedView] = []
        for (index, entry) in entries.enumerated() {
            let path = "views[\(index)]"
            let (banner, atText, id) = try CommandBody.reading { () throws(FieldError) -> (String, String, String?) in
                let fields = try JSONFields(entry, path: path)
                try fields.rejectUnknown(allowing: ["banner", "at", "ms", "id"])
                let banner = try fields.required("banner", .string)
                let at = try fields.required("at", .string)
                let ms = try fields.required("ms", .integralNumber)
                guard let milliseconds = ms.integralValue, (0...86_400_000).contains(milliseconds) else {
                    throw FieldError(field: fields.fieldPath("ms"), message: "must be 0 to 86400000 milliseconds")
                }
                let id = try fields.optional("id", .string)
                if let id, !isViewID(id) {
                    throw FieldError(
                        field: fields.fieldPath("id"), message: "must be 1 to 64 of a-z, A-Z, 0-9, '.', '_', '-'")
                }
                return (banner, at, id)
            }
            guard known.contains(banner) else {
                throw Problem.unprocessable("\(path).banner: the carousel has no banner '\(banner)'")
            }
            guard let at = Timestamp(rfc3339: atText) else {
                throw Problem.badRequest("field '\(path).at': '\(atText)' is not an RFC 3339 date-time")
            }
            guard at <= now + viewClockTolerance else {
                throw Problem.unprocessable(
                    "\(path).at: \(atText) is in the future (the service's time is \(now.rfc3339))")
            }
            guard at + viewMaximumAge >= now else {
                throw Problem.unprocessable(
                    "\(path).at: \(atText) is more than a day ago; views older than that are not counted")
            }
            views.append(ReportedView(banner: banner, at: at, id: id))
        }
        return views
    }

    /// 1 to 64 of a-z, A-Z, 0-9, '.', '_', '-': what a screen makes (a UUID fits).
    static func isViewID(_ id: String) -> Bool {
        let bytes = id.utf8
        return (1...64).contains(bytes.count)
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    // MARK: GET …/banners/{id}/click

    /// 302 to the banner's link; 404 for a banner the carousel does not have or one without a link.
    static func click(banner id: String, state: Carousel, carousel: String) throws(Problem) -> (Banner, Response) {
        let banner =
            state.banners.first { $0.id == id } ?? state.takeover.map(\.banner).flatMap { $0.id == id ? $0 : nil }
        guard let banner else { throw Problem(status: 404, detail: "carousel '\(carousel)' has no banner '\(id)'") }
        guard let link = banner.link else {
            throw Problem(status: 404, detail: "banner '\(id)' of carousel '\(carousel)' has no link to go to")
        }
        return (
            banner,
            Response(
                status: 302,
                headers: [HTTPHeader("Location", link), HTTPHeader("Cache-Control", "no-store")], body: [])
        )
    }

    // MARK: GET …/stats

    /// What a stats request asks for: the span (widened to whole buckets) and the bucket.
    struct StatsQuery {
        let from: Timestamp
        let to: Timestamp
        let bucket: StatsReport.Bucket
        let csv: Bool
    }

    /// `?from=T&to=T&bucket=hour|day`; by default the last 24 hours by hour (the last 7 days by
    /// day). `Accept: text/csv` asks for CSV.
    static func statsQuery(of request: borrowing Request, zone: ZoneRules, now: Timestamp) throws(Problem)
        -> StatsQuery
    {
        let bucketText = request.queryParameter("bucket") ?? "hour"
        guard let bucket = StatsReport.Bucket(rawValue: bucketText) else {
            throw Problem.badRequest("bucket '\(bucketText)' is not one of: hour, day")
        }
        // By default up to now, the bucket of now included.
        let to = try QueryValues.time(request.queryParameter("to"), name: "to") ?? now + .nanoseconds(1)
        let from =
            try QueryValues.time(request.queryParameter("from"), name: "from") ?? to
            + .seconds(bucket == .hour ? -86_400 : -7 * 86_400)
        guard from < to else {
            throw Problem.unprocessable("from (\(from.rfc3339)) must be before to (\(to.rfc3339))")
        }
        guard StatsReport.bucketCount(from: from, to: to, bucket: bucket) <= StatsReport.maximumBuckets else {
            throw Problem.unprocessable(
                "from \(from.rfc3339) to \(to.rfc3339) is more than \(StatsReport.maximumBuckets) \(bucket.rawValue)s; "
                    + (bucket == .hour ? "ask for a shorter span, or bucket=day" : "ask for a shorter span"))
        }
        let (start, end) = StatsReport.span(from: from, to: to, bucket: bucket, zone: zone)
        return StatsQuery(from: start, to: end, bucket: bucket, csv: QueryValues.asksForCSV(request))
    }
}
