import MicroHTTP

/// The built-in web client: a page at `/` that shows the carousel live and drives it, with its
/// script, style sheet and icon. Each is built into responses once, at start, with an ETag of its
/// content and a strict Content-Security-Policy (no inline code, nothing from other hosts but
/// banner images).
struct WebClient: Sendable {
    enum Asset: CaseIterable, Sendable {
        case page, script, style, icon

        var path: String {
            switch self {
            case .page: "/"
            case .script: "/app.js"
            case .style: "/app.css"
            case .icon: "/favicon.svg"
            }
        }

        var contentType: String {
            switch self {
            case .page: "text/html; charset=utf-8"
            case .script: "text/javascript; charset=utf-8"
            case .style: "text/css; charset=utf-8"
            case .icon: "image/svg+xml"
            }
        }

        var content: String {
            switch self {
            case .page: WebClient.page
            case .script: WebClient.script
            case .style: WebClient.style
            case .icon: WebClient.icon
            }
        }
    }

    private let representations: [Representation]

    init(cors: CORSPolicy) {
        let security = [
            HTTPHeader("Content-Security-Policy", Self.contentSecurityPolicy(framedBy: cors)),
            HTTPHeader("X-Content-Type-Options", "nosniff"),
            HTTPHeader("Referrer-Policy", "strict-origin-when-cross-origin"),
            HTTPHeader("Cache-Control", "no-cache"),
        ]
        representations = Asset.allCases.map { asset in
            let body = Array(asset.content.utf8)
            return Representation(
                etag: "\"web-\(String(Self.fingerprint(body), radix: 36))\"", body: body,
                headers: [HTTPHeader("Content-Type", asset.contentType)] + security)
        }
    }

    func response(_ asset: Asset, ifNoneMatch: String?) -> PreparedResponse {
        representations[Asset.allCases.firstIndex(of: asset)!].response(ifNoneMatch: ifNoneMatch)
    }

    /// Scripts, styles and requests only from this service; banner images from anywhere on the
    /// web. The page may be framed by the origins CORS allows (a shop's home page), else only by
    /// this service.
    static func contentSecurityPolicy(framedBy cors: CORSPolicy) -> String {
        let ancestors = cors.allowsAnyOrigin ? "*" : (["'self'"] + cors.origins).joined(separator: " ")
        return "default-src 'none'; script-src 'self'; style-src 'self'; img-src http: https: data:; "
            + "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors \(ancestors)"
    }

    /// FNV-1a, 64-bit: stable across runs, so browsers keep their copy over restarts.
    static func fingerprint(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { hash, byte in (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
}
