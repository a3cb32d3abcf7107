import Carousel
import CarouselRuntime
import Digest
import JSON
import MicroHTTP
import Store
import TimeZones

/// The fleet's requests (docs/SCREENS.md, "The fleet"): a screen's id on polls and streams, its
/// receipts, and the lists and events operators read. Checked on the calling thread; nothing is
/// kept of a refused one.
enum ScreenRequests {
    static let header = "X-Screen-Id"
    static let keyHeader = "X-Screen-Key"

    /// The key a screen sends with what it reports (`X-Screen-Key`, else `?screenKey=`; nil when
    /// none): docs/SCREENS.md, "A screen's own reports". 400 for an invalid one; both are checked
    /// when both are given, so an invalid one is refused, not hidden by the other (found by
    /// schemathesis). A request without a query scans nothing for it.
    static func screenKey(of request: borrowing Request) throws(Problem) -> ScreenKey? {
        let byHeader = try request.header(keyHeader).map { text throws(Problem) in try key(text, from: keyHeader) }
        let byQuery = try request.queryParameter("screenKey").map { text throws(Problem) in
            try key(text, from: "screenKey")
        }
        return byHeader ?? byQuery
    }

    private static func key(_ text: String, from source: String) throws(Problem) -> ScreenKey {
        guard let key = ScreenKey(text) else {
            throw Problem.badRequest("\(source): the screen key is invalid: \(ScreenKey.rule)")
        }
        return key
    }

    /// The screen a read or a subscription names (`X-Screen-Id`, else `?screen=`; nil when none),
    /// the audience it declares (`?audience=`), and the key it sends (`screenKey(of:)`). 400 for an
    /// invalid one, the screen checked first; both names are checked when both are given, so an
    /// invalid one is refused, not hidden by the other.
    static func screenAudienceAndKey(of request: borrowing Request) throws(Problem) -> (
        screen: ScreenID?, audience: String?, key: ScreenKey?
    ) {
        let (screenText, audienceText) = request.queryParameters("screen", "audience")
        let byHeader = try request.header(header).map { text throws(Problem) in try screen(text, from: header) }
        let byQuery = try screenText.map { text throws(Problem) in try screen(text, from: "screen") }
        return (byHeader ?? byQuery, try QueryValues.audience(audienceText), try screenKey(of: request))
    }

    private static func screen(_ text: String, from source: String) throws(Problem) -> ScreenID {
        guard let id = ScreenID(text) else {
            throw Problem.badRequest("\(source): screen id '\(text.prefix(80))' is invalid: \(ScreenID.rule)")
        }
        return id
    }

    /// A screen id from the path (`/carousels/{name}/screens/{id}/receipts`).
    static func screen(inPath text: String) throws(Problem) -> ScreenID {
        guard let id = ScreenID(text) else {
            throw Problem.badRequest("screen id '\(text.prefix(80))' in the path is invalid: \(ScreenID.rule)")
        }
        return id
    }

    /// What the fleet's refusal of a report is told: 429 for a carousel full of screens (its reads
    /// are served all the same, untracked), 422 for a receipt.
    static func problem(_ refusal: ScreenRefusal) -> Problem {
        switch refusal {
        case .full(let carousel, let limit):
            Problem(
                status: 429,
                detail: "carousel '\(carousel)' has \(limit) screens, its limit (maxScreens); screens known "
                    + "already go on. Raise CAROUSEL_MAX_SCREENS, or let offline screens be forgotten")
        case .invalidReceipt(let field, let detail):
            .unprocessable("\(field): \(detail)")
        case .claimed(let carousel, let screen):
            Problem(
                status: 403,
                detail: "screen '\(screen)' of carousel '\(carousel)' is claimed by another key; send the key it "
                    + "first reported with (X-Screen-Key or ?screenKey=), or have an operator forget the screen "
                    + "(DELETE /carousels/\(carousel)/screens/\(screen)) so that it can be claimed again")
        }
    }

    // MARK: POST …/screens/{id}/receipts

    /// `{"receipts": [{"version": v, "banner": id, "shownAt": time, "offsetMs": n, "rttMs": n}, …]}`,
    /// its JSON types checked (400 naming the field); what the receipts say is the fleet's to check.
    /// Like views, `text/plain` is read as JSON too: `navigator.sendBeacon` sends that.
    static func receipts(of request: borrowing Request) throws(Problem) -> [ReportedReceipt] {
        if try CommandBody.hasJSONBody(request, alsoAccepting: "text/plain"),
            let receipts = validReceipts(in: request.body)
        {
            return receipts
        }
        let document = try CommandBody.document(of: request, alsoAccepting: "text/plain")
        guard let document else {
            throw Problem.badRequest(
                "missing body; send {\"receipts\": [{\"version\": v, \"banner\": id, \"shownAt\": time}, …]}")
        }
        let entries = try CommandBody.reading { () throws(FieldError) -> [JSONValue] in
            let fields = try JSONFields(document)
            try fields.rejectUnknown(allowing: ["receipts"])
            return try fields.required("receipts", .array)
        }
        guard entries.count <= FleetSettings.maxReceipts else {
            throw Problem(
                status: 413,
                detail: "\(entries.count) receipts in one request; send at most \(FleetSettings.maxReceipts) a request")
        }
        return try entries.enumerated().map { (index, entry) throws(Problem) in
            try CommandBody.reading { () throws(FieldError) -> ReportedReceipt in
                let fields = try JSONFields(entry, path: "receipts[\(index)]")
                try fields.rejectUnknown(allowing: receiptFields)
                let version = try fields.required("version", .integralNumber)
                guard let value = version.integralValue, value >= 0 else {
                    throw FieldError(
                        field: fields.fieldPath("version"), message: "must be a version from 0 to 9200000000000000000")
                }
                let banner = try fields.required("banner", .string)
                let shownAtText = try fields.required("shownAt", .string)
                guard let shownAt = Timestamp(rfc3339: shownAtText) else {
                    throw FieldError(
                        field: fields.fieldPath("shownAt"), message: "'\(shownAtText)' is not an RFC 3339 date-time")
                }
                return ReportedReceipt(
                    banner: banner, version: UInt64(value), shownAt: shownAt,
                    offsetMs: try milliseconds("offsetMs", of: fields, within: offsetRange),
                    rttMs: try milliseconds("rttMs", of: fields, within: rttRange))
            }
        }
    }

    static let receiptFields = ["version", "banner", "shownAt", "offsetMs", "rttMs"]
    static let offsetRange = -86_400_000...86_400_000
    static let rttRange = 0...600_000

    /// The receipts of `body` when it is in the shape the page and the component send and every
    /// one of them is valid, read without the general JSON tree (`FlatRecords`: a receipt's body
    /// was most of its cost, docs/PERFORMANCE.md, "What a receipt costs"); nil for anything else,
    /// which `receipts(of:)` reads the general way, taking it or saying what is wrong.
    private static func validReceipts(in body: [UInt8]) -> [ReportedReceipt]? {
        guard let records = FlatRecords.read(body, key: "receipts", names: receiptFields),
            records.count <= FleetSettings.maxReceipts
        else { return nil }
        var receipts: [ReportedReceipt] = []
        receipts.reserveCapacity(records.count)
        for record in records {
            guard case .integer(let version)? = record[0], version >= 0, case .string(let banner)? = record[1],
                case .string(let shownAtText)? = record[2], let shownAt = Timestamp(rfc3339: shownAtText),
                let offsetMs = milliseconds(record[3], within: offsetRange),
                let rttMs = milliseconds(record[4], within: rttRange)
            else { return nil }
            receipts.append(
                ReportedReceipt(
                    banner: banner, version: UInt64(version), shownAt: shownAt, offsetMs: offsetMs, rttMs: rttMs))
        }
        return receipts
    }

    /// An optional milliseconds field as read by `FlatRecords`: `.some(nil)` when absent, nil when
    /// not an integer in `range`.
    private static func milliseconds(_ value: FlatRecords.Scalar?, within range: ClosedRange<Int>) -> Int64?? {
        switch value {
        case nil: .some(nil)
        case .integer(let milliseconds)? where range.contains(milliseconds): .some(Int64(milliseconds))
        default: nil
        }
    }

    private static func milliseconds(_ key: String, of fields: JSONFields, within range: ClosedRange<Int>)
        throws(FieldError) -> Int64?
    {
        guard let number = try fields.optional(key, .integralNumber) else { return nil }
        guard let value = number.integralValue, range.contains(value) else {
            throw FieldError(
                field: fields.fieldPath(key), message: "must be \(range.lowerBound) to \(range.upperBound) milliseconds"
            )
        }
        return Int64(value)
    }

    // MARK: GET /screens, GET …/screens, GET /screens/events

    /// `{"screens": [entry, …]}`, offline and out-of-step first.
    static func list(_ entries: [ScreenEntry], headers: [HTTPHeader]) -> Response {
        var object = JSONObject()
        object.add("screens", entries.map(json))
        return Response(
            status: 200, headers: [PreparedReads.jsonContentType, HTTPHeader("Cache-Control", "no-store")] + headers,
            body: object.line)
    }

    /// One screen as `GET /screens` lists it and `GET /screens/events` sends it.
    static func json(_ entry: ScreenEntry) -> JSONObject {
        let record = entry.record
        var object = JSONObject()
        object.add("id", record.id.rawValue)
        object.add("carousel", entry.carousel)
        object.add("state", entry.state.name)
        if case .outOfStep(let reason) = entry.state {
            object.add("reason", reason.rawValue)
        } else {
            object.add("reason", String?.none)
        }
        object.add("since", entry.since.rfc3339)
        object.add("lastSeen", record.lastSeen.rfc3339)
        object.add("via", record.via.rawValue)
        object.add("userAgent", record.userAgent)
        object.add("audience", record.audience)
        if let receipt = record.receipt {
            var shown = JSONObject()
            shown.add("banner", receipt.banner)
            shown.add("version", receipt.version)
            shown.add("at", receipt.shownAt.rfc3339)
            shown.add("lateMs", receipt.lateness.map { Int($0.nanoseconds / 1_000_000) })
            object.add("shown", shown)
            object.add("offsetMs", receipt.offsetMs.map { Int($0) })
            object.add("rttMs", receipt.rttMs.map { Int($0) })
        } else {
            object.add("shown", JSONObject?.none)
            object.add("offsetMs", Int?.none)
            object.add("rttMs", Int?.none)
        }
        return object
    }

    /// What webhooks are told of a screen that changed state (docs/WEBHOOKS.md): `screen.online`,
    /// `screen.offline` or `screen.out-of-step`, at its `since`, the entry as `GET /screens` lists
    /// it. Its id is made from the screen, the state and the instant that state began as the
    /// stored rows give it, so that replicas judging the same change queue it once (a frozen
    /// screen's verdict is each replica's own: its last receipt's instant stands in).
    static func webhookEvent(_ entry: ScreenEntry) -> QueuedEvent {
        let type = webhookEventType(of: entry.state)
        var began = entry.since
        if case .outOfStep(.frozen) = entry.state { began = entry.record.receipt?.shownAt ?? entry.since }
        let name =
            "screen \(entry.record.carousel) \(entry.record.id.rawValue) \(type.rawValue) \(began.nanosecondsSinceEpoch)"
        return QueuedEvent(id: UUIDText.named(name), type: type, at: entry.since, data: json(entry))
    }

    /// The webhook event of a screen come into `state`.
    static func webhookEventType(of state: ScreenState) -> WebhookEvent {
        switch state {
        case .online: .screenOnline
        case .offline: .screenOffline
        case .outOfStep: .screenOutOfStep
        }
    }

    /// `event: screen`, `data: <the entry, one line of JSON>`.
    static func event(_ entry: ScreenEntry) -> [UInt8] {
        Array("event: screen\ndata: ".utf8) + json(entry).bytes + Array("\n\n".utf8)
    }
}
