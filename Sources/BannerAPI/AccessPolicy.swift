import CarouselRuntime
import MicroHTTP
import Store
import TimeZones

/// Who may do what (docs/API.md, roles; docs/TOKENS.md): reads are public; *control* (moves,
/// pause, resume, jump) needs a token when the environment sets a control token; *admin* (every
/// write of the admin API) needs a token when it sets an admin token, and is taken from this host
/// only otherwise; *stats* is the admin role's or a stats token's. Named tokens grant their role
/// (admin includes control and stats) on their carousels wherever the request comes from; the
/// environment's decide only what a request without a token may do. The one place these rules
/// live; each check answers who the request acts as (the history's and the audit log's actor).
public struct AccessPolicy: Sendable {
    private let control: BearerToken?
    private let admin: BearerToken?
    private let named: NamedTokens?
    private let clock: @Sendable () -> Timestamp

    public init(controlToken: String?, adminToken: String?) {
        control = controlToken.map(BearerToken.init)
        admin = adminToken.map(BearerToken.init)
        named = nil
        clock = Timestamp.now
    }

    private init(_ policy: AccessPolicy, named: NamedTokens, clock: @escaping @Sendable () -> Timestamp) {
        control = policy.control
        admin = policy.admin
        self.named = named
        self.clock = clock
    }

    /// This policy, also granting what the named tokens of `tokens` grant (expiry on `clock`).
    public func granting(_ tokens: NamedTokens, clock: @escaping @Sendable () -> Timestamp) -> AccessPolicy {
        AccessPolicy(self, named: tokens, clock: clock)
    }

    /// For the start-up log line: what each role needs, never the tokens.
    public var summary: String {
        let controlRule = control == nil ? "commands open to all" : "commands need a token"
        let adminRule = admin == nil ? "admin from this host only (no admin token)" : "admin needs the admin token"
        return "\(controlRule), \(adminRule)"
    }

    /// What a request's `Authorization` header shows.
    private enum Bearer {
        case none
        case environmentAdmin
        case environmentControl
        case named(TokenRecord)
        /// A bearer token that is no token of this service (or one revoked).
        case unknown
    }

    private func bearer(_ request: borrowing Request) -> Bearer {
        guard let authorization = request.header("Authorization") else { return .none }
        if admin?.authorizes(authorization) == true { return .environmentAdmin }
        if control?.authorizes(authorization) == true { return .environmentControl }
        guard let secret = BearerToken.secret(in: authorization) else { return .unknown }
        return named?.token(secret: secret).map(Bearer.named) ?? .unknown
    }

    /// Commands on carousel `carousel`: `env:admin`, `env:control`, a token's name, or
    /// `anonymous` (no control token is set, and none was sent).
    func authorizeControl(_ request: borrowing Request, carousel: String?) throws(Problem) -> String {
        switch bearer(request) {
        case .environmentAdmin: return "env:admin"
        case .environmentControl: return "env:control"
        case .named(let token): return try check(token, for: .control, carousel: carousel)
        case .none, .unknown:
            guard control == nil else {
                throw Self.unauthorized(
                    "missing or wrong bearer token; send Authorization: Bearer <CAROUSEL_CONTROL_TOKEN>")
            }
            return "anonymous"
        }
    }

    /// Stats of carousel `carousel`: a stats token's, or the admin role's.
    func authorizeStats(_ request: borrowing Request, carousel: String?) throws(Problem) -> String {
        let presented = bearer(request)
        if case .named(let token) = presented { return try check(token, for: .stats, carousel: carousel) }
        return try authorizeAdmin(request, presenting: presented, carousel: carousel)
    }

    /// An admin request about carousel `carousel` (nil: about none, or all: it needs a token for
    /// every carousel). Who the request acts as (docs/HISTORY.md): `env:admin` (the admin
    /// token), a named token's name, or `loopback` (no admin token set, a request from this
    /// host); else the 401 or 403.
    @discardableResult
    func authorizeAdmin(_ request: borrowing Request, carousel: String?) throws(Problem) -> String {
        try authorizeAdmin(request, presenting: bearer(request), carousel: carousel)
    }

    /// `authorizeAdmin` with the request's bearer token already read (and a named one hashed).
    private func authorizeAdmin(_ request: borrowing Request, presenting presented: Bearer, carousel: String?)
        throws(Problem) -> String
    {
        switch presented {
        case .environmentAdmin: return "env:admin"
        case .named(let token): return try check(token, for: .admin, carousel: carousel)
        case .environmentControl where admin != nil:
            // A token the service knows, of a lower role: refused as a named one would be.
            throw Problem(
                status: 403,
                detail: "the control token (CAROUSEL_CONTROL_TOKEN) grants commands only; this request needs the "
                    + "admin role: send Authorization: Bearer <CAROUSEL_ADMIN_TOKEN> or a named admin token")
        case .none, .unknown, .environmentControl: break
        }
        if admin != nil {
            throw Self.unauthorized(
                "missing or wrong bearer token; admin requests need Authorization: Bearer <CAROUSEL_ADMIN_TOKEN>")
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

    /// Why an admin write asked at `askedAt` by `requester` may no longer be made on `carousel`
    /// (a scheduled change, made at its time: docs/SCHEDULED.md); nil while it still may. A named
    /// token must still be there (not revoked, nor revoked and made again under its name since),
    /// unexpired, admin and for `carousel`: a revoked token's changes are not made for it later.
    /// The environment's admin and this host keep what they asked (they are the operator's).
    func withdrawn(_ requester: Requester, askedAt: Timestamp, carousel: String) -> String? {
        let actor = requester.actor
        guard let named, !actor.hasPrefix("env:"), !TokenRequests.reservedNames.contains(actor) else { return nil }
        guard let token = named.token(named: actor), token.createdAt <= askedAt else {
            return "the token '\(actor)' that asked for it was revoked"
        }
        do throws(Problem) {
            _ = try check(token, for: .admin, carousel: carousel)
            return nil
        } catch {
            return error.detail
        }
    }

    /// `token`'s name when it may act in `role` on `carousel` (nil: on no one carousel) now;
    /// else why not. Admin includes control and stats.
    private func check(_ token: TokenRecord, for role: TokenRole, carousel: String?) throws(Problem) -> String {
        if let expiry = token.expiresAt, expiry <= clock() {
            throw Self.unauthorized(
                "the token '\(token.name)' expired at \(expiry.rfc3339); an admin can create another (POST /tokens)")
        }
        guard token.role == role || token.role == .admin else {
            throw Problem(
                status: 403,
                detail: "the token '\(token.name)' has the \(token.role.rawValue) role; this request needs the "
                    + "\(role.rawValue) role")
        }
        if let scope = token.carousels {
            guard let carousel else {
                throw Problem(
                    status: 403,
                    detail: "the token '\(token.name)' is for the carousels \(scope.joined(separator: ", ")) only; "
                        + "this request is about none or all of them: it needs a token for every carousel")
            }
            guard scope.contains(carousel) else {
                throw Problem(
                    status: 403,
                    detail: "the token '\(token.name)' is for the carousels \(scope.joined(separator: ", ")) only, "
                        + "not '\(carousel)'")
            }
        }
        return token.name
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
    /// The token of `Authorization: Bearer <token>`, trimmed; nil for any other header.
    static func secret(in authorization: String) -> String? {
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        return String(parts[1]).trimmingCharacters(in: " ")
    }

    private let expected: [UInt8]

    init(_ token: String) {
        expected = Array(token.utf8)
    }

    /// True for `Authorization: Bearer <token>` with the right token. The comparison takes the
    /// same time wherever the first difference is, so response timing does not leak the token.
    func authorizes(_ authorization: String?) -> Bool {
        guard let authorization, let secret = Self.secret(in: authorization) else { return false }
        let presented = Array(secret.utf8)
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        for offset in 0..<max(presented.count, expected.count) {
            let a = offset < presented.count ? presented[offset] : 0
            let b = offset < expected.count ? expected[offset] : 0
            difference |= a ^ b
        }
        return difference == 0 && presented.count == expected.count
    }
}
