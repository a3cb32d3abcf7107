import Carousel
import Definitions
import JSON
import MicroHTTP

/// Turns a command request's body into a `CarouselCommand`, or the 400/415/422 that explains
/// what is wrong with it. A body is optional where no field is required; when present it must
/// be a JSON object (Content-Type JSON, or none) with only the fields the endpoint defines.
enum CommandBody {
    static func command(for route: CommandRoute, request: borrowing Request, bannerCount: Int) throws(Problem)
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
            guard let value = index.integralValue else {
                throw Problem.unprocessable("index \(index.literal) is out of range; there are \(bannerCount) banners")
            }
            return .jump(to: value)
        }
    }

    /// Field errors in a body are the client's: 400, naming the field.
    private static func reading<Value>(_ body: () throws(FieldError) -> Value) throws(Problem) -> Value {
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

    /// The body as JSON (400 when it is not, 415 when it says it is something else); nil for a
    /// blank body.
    static func document(of request: borrowing Request) throws(Problem) -> JSONValue? {
        let isBlank = request.body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if isBlank { return nil }
        if let contentType = request.header("Content-Type"), !isJSON(contentType) {
            throw Problem(status: 415, detail: "Content-Type '\(contentType)' is not JSON; send application/json")
        }
        do {
            return try JSONParser.parse(request.body)
        } catch {
            throw Problem.badRequest("request body: \(error.description)")
        }
    }

    /// `application/json` or any `…/…+json`, parameters (charset) ignored.
    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        let normalized = mediaType.trimmingCharacters(in: " \t").lowercased()
        return normalized == "application/json"
            || (normalized.hasPrefix("application/") && normalized.hasSuffix("+json"))
    }
}
