import Carousel
import Definitions
import JSON
import MicroHTTP

/// Turns a command request's body into a `CarouselCommand`, or the 400/415/422 that explains
/// what is wrong with it. A body is optional where no field is required; when present it must
/// be a JSON object (with a JSON Content-Type) with only the fields the endpoint defines.
enum CommandBody {
    /// - Parameter state: the carousel's latest state: what an index (in the rotation of the
    ///   request's `?audience=`) or a banner id is checked against.
    static func command(for route: CommandRoute, request: borrowing Request, state: Carousel) throws(Problem)
        -> CarouselCommand
    {
        let fields = try parseFields(of: request)
        switch route {
        case .next:
            try reading { () throws(FieldError) in try fields?.rejectUnknown(allowing: []) }
            return .next
        case .previous:
            try reading { () throws(FieldError) in try fields?.rejectUnknown(allowing: []) }
            return .previous
        case .resume:
            try reading { () throws(FieldError) in try fields?.rejectUnknown(allowing: []) }
            return .resume
        case .endTakeover:
            try reading { () throws(FieldError) in try fields?.rejectUnknown(allowing: []) }
            return .endTakeover
        case .startTakeover:
            return try takeover(fields, of: state)
        case .pause:
            let seconds = try reading { () throws(FieldError) -> JSONNumber? in
                try fields?.rejectUnknown(allowing: ["seconds"])
                return try fields?.optional("seconds", JSONKind<JSONNumber>.number.orNull) ?? nil
            }
            guard let seconds else { return .pause(for: nil) }
            switch Validation.duration(seconds: seconds.double, within: Carousel.pauseDurations) {
            case .success(let duration): return .pause(for: duration)
            case .failure(let problem): throw Problem.unprocessable("field 'seconds' \(problem.message)")
            }
        case .jump:
            guard let fields else {
                throw Problem.badRequest("missing body; send {\"index\": i} with Content-Type: application/json")
            }
            // 1.0 is an integer to JSON Schema (and to the OpenAPI document); 1.5 is not.
            let index = try reading { () throws(FieldError) -> JSONNumber in
                try fields.rejectUnknown(allowing: ["index"])
                return try fields.required("index", .integralNumber)
            }
            let audience = try QueryValues.audience(of: request)
            guard let value = index.integralValue else {
                let count = state.state(for: audience).count
                throw Problem.unprocessable("index \(index.literal) is out of range; there are \(count) banners")
            }
            return .jump(to: value, audience: audience)
        }
    }

    /// `{"banner": "<id>" | {a banner}, "seconds": s}` (docs/SCHEDULES.md, takeovers): an id of
    /// the carousel's banners, or a banner of its own, checked as the admin API checks banners.
    private static func takeover(_ fields: JSONFields?, of state: Carousel) throws(Problem) -> CarouselCommand {
        guard let fields else {
            throw Problem.badRequest(
                "missing body; send {\"banner\": \"<id>\"} or {\"banner\": {…}}, optionally with \"seconds\"")
        }
        let (given, seconds) = try reading { () throws(FieldError) -> (JSONValue, JSONNumber?) in
            try fields.rejectUnknown(allowing: ["banner", "seconds"])
            guard let banner = fields["banner"] else {
                throw FieldError(field: "banner", message: "required field is missing; must be a banner id or a banner")
            }
            return (banner, try fields.optional("seconds", JSONKind<JSONNumber>.number.orNull) ?? nil)
        }
        let banner: Banner
        switch given {
        case .string(let id):
            guard let listed = state.banners.first(where: { $0.id == id }) else {
                throw Problem.unprocessable(
                    "banner: the carousel has no banner '\(id)'; name one of its banners or give a banner object")
            }
            banner = listed
        case .object:
            do {
                banner = try BannerDecoding.banner(JSONFields(given, path: "banner"))
            } catch {
                throw Problem.unprocessable("\(error.field): \(error.message)")
            }
        default:
            throw Problem.badRequest(
                "field 'banner': must be a banner id or a banner object, got \(given.kindDescription)")
        }
        guard let seconds else { return .startTakeover(banner: banner, duration: nil) }
        switch Validation.duration(seconds: seconds.double, within: Carousel.pauseDurations) {
        case .success(let duration): return .startTakeover(banner: banner, duration: duration)
        case .failure(let problem): throw Problem.unprocessable("field 'seconds' \(problem.message)")
        }
    }

    /// Field errors in a body are the client's: 400, naming the field.
    static func reading<Value>(_ body: () throws(FieldError) -> Value) throws(Problem) -> Value {
        do {
            return try body()
        } catch {
            throw Problem.badRequest("field '\(error.field)': \(error.message)")
        }
    }

    /// The body's top-level fields; nil for an empty body.
    private static func parseFields(of request: borrowing Request) throws(Problem) -> JSONFields? {
        guard let document = try document(of: request) else { return nil }
        do {
            return try JSONFields(document)
        } catch {
            throw Problem.badRequest("request body \(error.message)")
        }
    }

    /// The body as JSON (400 when it is not, 415 when its `Content-Type` is not a JSON media type
    /// or `alsoAccepting`); nil for an empty body. Whitespace alone is not JSON: 400, as any other
    /// malformed body.
    ///
    /// A body without a `Content-Type` is 415 unless `alsoAccepting` is given (views, which
    /// screens send as text): a browser sends a body of a type that is not JSON from a page of any
    /// origin without asking first (no CORS preflight), so a command or an admin write that took
    /// one could be made by any site a visitor of this host has open (docs/API.md, roles).
    static func document(of request: borrowing Request, alsoAccepting other: String? = nil) throws(Problem)
        -> JSONValue?
    {
        guard try hasJSONBody(request, alsoAccepting: other) else { return nil }
        do {
            return try JSONParser.parse(request.body)
        } catch {
            throw Problem.badRequest("request body: \(error.description)")
        }
    }

    /// Whether `request` has a body (false: none), refused with 415 when its type is neither JSON
    /// nor `other`.
    static func hasJSONBody(_ request: borrowing Request, alsoAccepting other: String? = nil) throws(Problem) -> Bool {
        if request.body.isEmpty { return false }
        if let contentType = request.header("Content-Type") {
            if !isJSON(contentType) && other.map({ mediaType(of: contentType) == $0 }) != true {
                throw Problem(status: 415, detail: "Content-Type '\(contentType)' is not JSON; send application/json")
            }
        } else if other == nil {
            throw Problem(
                status: 415, detail: "a request body needs Content-Type: application/json (or another JSON media type)")
        }
        return true
    }

    /// `application/json` or any `…/…+json`, parameters (charset) ignored.
    static func isJSON(_ contentType: String) -> Bool {
        if contentType == "application/json" { return true }  // as nearly every client sends it
        let normalized = mediaType(of: contentType)
        return normalized == "application/json"
            || (normalized.hasPrefix("application/") && normalized.hasSuffix("+json"))
    }

    /// `text/plain` of `Text/Plain; charset=UTF-8`.
    static func mediaType(of contentType: String) -> String {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return mediaType.trimmingCharacters(in: " \t").lowercased()
    }
}
