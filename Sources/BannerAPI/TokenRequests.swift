import CarouselRuntime
import JSON
import MicroHTTP
import Store
import TimeZones

/// `POST /tokens`' body, checked, and the documents of `/tokens` (docs/TOKENS.md). A secret is
/// in one answer only, the creation's, and never in a log line.
enum TokenRequests {
    /// What `POST /tokens` asks for.
    struct NewToken {
        let name: String
        let role: TokenRole
        let carousels: [String]?
        let expiresAt: Timestamp?
    }

    /// The names the history and the audit log give to requests without a named token: no token
    /// may take them.
    static let reservedNames: Set<String> = ["loopback", "anonymous", "seed", "import", "unrecorded"]

    /// The body checked: a 400 or 422 naming the field. `carouselExists` says whether a carousel
    /// of a name is served; `now` is when the request came.
    static func newToken(
        of request: borrowing Request, now: Timestamp, carouselExists: (String) -> Bool
    ) throws(Problem) -> NewToken {
        guard let body = try CommandBody.document(of: request) else {
            throw Problem.badRequest(
                "missing body; send a JSON object {\"name\", \"role\", \"carousels\"?, \"expiresAt\"?} with "
                    + "Content-Type: application/json")
        }
        do throws(FieldError) {
            let fields = try JSONFields(body)
            try fields.rejectUnknown(allowing: ["name", "role", "carousels", "expiresAt"])
            let name = try fields.required("name", .string)
            guard Self.isName(name) else {
                throw FieldError(
                    field: "name",
                    message: "'\(name)' is not a token name; use 1 to 64 of a-z, 0-9, '.', '_', '-', "
                        + "starting with a letter or digit")
            }
            guard !reservedNames.contains(name) else {
                throw FieldError(
                    field: "name", message: "'\(name)' is reserved: it names requests made without a token")
            }
            let roleText = try fields.required("role", .string)
            guard let role = TokenRole(rawValue: roleText) else {
                throw FieldError(field: "role", message: "'\(roleText)' is no role; use admin, control or stats")
            }
            var carousels: [String]?
            if let listed = try fields.optional("carousels", JSONKind<[JSONValue]>.array.orNull) ?? nil {
                guard !listed.isEmpty else {
                    throw FieldError(
                        field: "carousels", message: "name at least one carousel, or leave the field out for all")
                }
                var names: [String] = []
                for (position, element) in listed.enumerated() {
                    let name = try JSONKind<String>.string.read(element, at: "carousels[\(position)]")
                    guard carouselExists(name) else {
                        throw FieldError(
                            field: "carousels[\(position)]",
                            message: "no carousel named '\(name)'; GET /carousels lists them")
                    }
                    if !names.contains(name) { names.append(name) }
                }
                carousels = names
            }
            var expiresAt: Timestamp?
            if let text = try fields.optional("expiresAt", JSONKind<String>.string.orNull) ?? nil {
                guard let instant = Timestamp(rfc3339: text) else {
                    throw FieldError(
                        field: "expiresAt", message: "'\(text)' is not an RFC 3339 time (2026-12-31T23:00:00Z)")
                }
                guard instant > now else {
                    throw FieldError(field: "expiresAt", message: "\(text) is past; give a time to come")
                }
                expiresAt = instant
            }
            return NewToken(name: name, role: role, carousels: carousels, expiresAt: expiresAt)
        } catch {
            throw Problem.unprocessable("\(error.field): \(error.message)")
        }
    }

    /// 1 to 64 of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit.
    static func isName(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...64).contains(bytes.count) else { return false }
        let isLetterOrDigit = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
        return isLetterOrDigit(bytes[0])
            && bytes.allSatisfy {
                isLetterOrDigit($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-")
            }
    }

    /// `{"name", "role", "carousels", "expiresAt", "expired", "createdAt", "createdBy"}`, and the
    /// secret when given (the creation's answer only).
    static func json(_ token: TokenRecord, now: Timestamp, secret: String? = nil) -> JSONObject {
        var object = JSONObject()
        object.add("name", token.name)
        object.add("role", token.role.rawValue)
        object.add("carousels", token.carousels)
        object.add("expiresAt", token.expiresAt?.rfc3339)
        object.add("expired", token.expiresAt.map { $0 <= now } ?? false)
        object.add("createdAt", token.createdAt.rfc3339)
        object.add("createdBy", token.createdBy)
        if let secret { object.add("secret", secret) }
        return object
    }

    static func list(_ tokens: [TokenRecord], now: Timestamp) -> PreparedResponse {
        var object = JSONObject()
        object.add("tokens", tokens.map { json($0, now: now) })
        return PreparedReads.uncached(object)
    }
}
