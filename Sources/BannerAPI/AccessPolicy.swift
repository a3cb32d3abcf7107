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

    func authorizeAdmin(_ request: borrowing Request) throws(Problem) {
        if let admin {
            guard admin.authorizes(request.header("Authorization")) else {
                throw Self.unauthorized(
                    "missing or wrong bearer token; admin requests need Authorization: Bearer <CAROUSEL_ADMIN_TOKEN>")
            }
            return
        }
        // A proxy on this host makes every client look local; what it forwarded is not.
        let forwarded = request.header("Forwarded") != nil || request.header("X-Forwarded-For") != nil
        guard request.isFromLoopback && !forwarded else {
            throw Problem(
                status: 403,
                detail: "admin requests are accepted from this host only while no admin token is set; set "
                    + "CAROUSEL_ADMIN_TOKEN (or CAROUSEL_ADMIN_TOKEN_FILE) on the service and send "
                    + "Authorization: Bearer <token>")
        }
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
