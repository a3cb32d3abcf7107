import Definitions
import MicroHTTP

/// Which web origins may call the API from a browser (CORS). Off by default.
public struct CORSPolicy: Sendable, Equatable {
    /// `*`, or the listed origins exactly (`https://shop.example.com`).
    let origins: [String]

    static let off = CORSPolicy(origins: [])

    /// Request headers a preflight may ask for.
    static let allowedHeaders =
        "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, X-Screen-Id, X-Screen-Key"
    /// Response headers scripts on another origin may read.
    static let exposedHeaders = "ETag, Location, X-Request-Id"

    var isEnabled: Bool { !origins.isEmpty }
    var allowsAnyOrigin: Bool { origins.contains("*") }

    /// The `Access-Control-Allow-Origin` value for a request from `origin`, or nil when that
    /// origin is not allowed (then the response carries no CORS headers at all).
    func allowedOrigin(for origin: String?) -> String? {
        if allowsAnyOrigin { return "*" }
        guard let origin, origins.contains(origin) else { return nil }
        return origin
    }

    /// Every value `allowedOrigin(for:)` can return, nil included: one variant of each
    /// pre-built response per value.
    var variants: [String?] {
        guard isEnabled else { return [nil] }
        return allowsAnyOrigin ? ["*"] : [nil] + origins
    }

    /// Headers for a response to a request whose origin resolved to `allowed`. With CORS on,
    /// every response varies by Origin, so caches must keep them apart.
    func headers(for allowed: String?) -> [HTTPHeader] {
        guard isEnabled else { return [] }
        var headers = [HTTPHeader("Vary", "Origin")]
        if let allowed {
            headers.append(HTTPHeader("Access-Control-Allow-Origin", allowed))
            headers.append(HTTPHeader("Access-Control-Expose-Headers", Self.exposedHeaders))
        }
        return headers
    }

    /// `*` or `http(s)://host[:port]` with nothing after: what a browser sends as Origin.
    public static func isValidOrigin(_ origin: String) -> Bool {
        if origin == "*" { return true }
        guard Validation.isAbsoluteHTTPURL(origin) else { return false }
        let afterScheme = origin.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        return afterScheme.count == 3 && !afterScheme[2].contains(where: { "/?#".contains($0) })
            && origin == origin.lowercased()
    }
}
