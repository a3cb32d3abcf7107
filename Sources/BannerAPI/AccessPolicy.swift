import MicroHTTP

/// Who may do what (docs/API.md, roles): reads are public; *control* (moves, pause, resume,
/// jump) needs the control token when one is set; *admin* (every write of the admin API) needs
/// the admin token, which grants control too. Without an admin token, admin requests are taken
/// from this host only. The one place these rules live.
public struct AccessPolicy: Sendable {
    private let control: BearerToken?
    private let admin: BearerToken?

    public init(controlToken: String?, adminToken: String?) {
        control = controlToken.map(BearerToken.init)
        admin = adminToken.map(BearerToken.init)
    }

    /// For the start-up log line: what each role needs, never the tokens.
    public var summary: String {
        let controlRule = control == nil ? "commands open to all" : "commands need a token"
        let adminRule = admin == nil ? "admin from this host only (no admin token)" : "admin needs the admin token"
        return "\(controlRule), \(adminRule)"
    }

    func authorizeControl(_ request: borrowing Request) throws(Problem) {
        guard let control else { return }
        let authorization = request.header("Authorization")
        if control.authorizes(authorization) || admin?.authorizes(authorization) == true { return }
        throw Self.unauthorized(
            "missing or wrong bearer token; send Authorization: Bearer <CAROUSEL_CONTROL_TOKEN>")
    }

    /// Who the request acts as, for the history (docs/HISTORY.md): `env:admin` (the admin token)
    /// or `loopback` (no admin token set, a request from this host); else the 401 or 403.
    @discardableResult
    func authorizeAdmin(_ request: borrowing Request) throws(Problem) -> String {
        if let admin {
            guard admin.authorizes(request.header("Authorization")) else {
                throw Self.unauthorized(
                    "missing or wrong bearer token; admin requests need Authorization: Bearer <CAROUSEL_ADMIN_TOKEN>")
            }
            return "env:admin"
        }
        // A proxy on this host makes every client look local; what it forwarded is not.
        let forwarded = request.header("Forwarded") != nil || request.header("X-Forwarded-For") != nil
        guard request.isFromLoopback && !forwarded else {
            throw Self.forbidden("admin requests are accepted from this host only while no admin token is set")
        }
        // A loopback peer may still be a browser on this host running another site's script: a
        // DNS name rebound to 127.0.0.1 (its Host is that name), or a page of another origin
        // (its Origin, or Sec-Fetch-Site, says so). Neither may borrow this host's trust.
        let host = request.header("Host")
        guard let host, Self.isLoopbackHost(host) else {
            throw Self.forbidden(
                "an admin request without a token must name this host (localhost, 127.0.0.1 or [::1]) in Host, "
                    + "not '\(host ?? "")'")
        }
        if let origin = request.header("Origin"), !Self.isOrigin(origin, of: host) {
            throw Self.forbidden(
                "an admin request without a token must not come from a page of another origin ('\(origin)')")
        }
        if request.header("Sec-Fetch-Site")?.lowercased() == "cross-site" {
            throw Self.forbidden("an admin request without a token must not come from a page of another site")
        }
        return "loopback"
    }

    private static func forbidden(_ reason: String) -> Problem {
        Problem(
            status: 403,
            detail: "\(reason); set CAROUSEL_ADMIN_TOKEN (or CAROUSEL_ADMIN_TOKEN_FILE) on the service and send "
                + "Authorization: Bearer <token>")
    }

    /// `localhost`, `127.0.0.1` or `[::1]`, with any port.
    static func isLoopbackHost(_ host: String) -> Bool {
        var name = Substring(host.lowercased())
        if name.hasPrefix("[") {
            guard let close = name.firstIndex(of: "]") else { return false }
            let port = name[name.index(after: close)...]
            guard port.isEmpty || isPort(port) else { return false }
            return name[...close] == "[::1]"
        }
        if let colon = name.firstIndex(of: ":") {
            guard isPort(name[colon...]) else { return false }
            name = name[..<colon]
        }
        return name == "localhost" || name == "127.0.0.1"
    }

    /// `:` and 1–5 digits.
    private static func isPort(_ text: Substring) -> Bool {
        text.first == ":" && (2...6).contains(text.count) && text.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// Whether `origin` is the origin of a page served from `host` (scheme, host and port).
    private static func isOrigin(_ origin: String, of host: String) -> Bool {
        let origin = origin.lowercased()
        let host = host.lowercased()
        return origin == "http://\(host)" || origin == "https://\(host)"
    }

    private static func unauthorized(_ detail: String) -> Problem {
        Problem(status: 401, detail: detail, headers: [HTTPHeader("WWW-Authenticate", "Bearer")])
    }
}

/// A bearer token, compared in constant time.
struct BearerToken: Sendable {
    private let expected: [UInt8]

    init(_ token: String) {
        expected = Array(token.utf8)
    }

    /// True for `Authorization: Bearer <token>` with the right token. The comparison takes the
    /// same time wherever the first difference is, so response timing does not leak the token.
    func authorizes(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let presented = Array(String(parts[1]).trimmingCharacters(in: " ").utf8)
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        for offset in 0..<max(presented.count, expected.count) {
            let a = offset < presented.count ? presented[offset] : 0
            let b = offset < expected.count ? expected[offset] : 0
            difference |= a ^ b
        }
        return difference == 0 && presented.count == expected.count
    }
}
