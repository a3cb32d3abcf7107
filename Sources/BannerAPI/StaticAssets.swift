import MicroHTTP
import WebClient

/// The files the service serves as they are — the web client's (module WebClient) and the OpenAPI
/// document (`Resources/openapi.json`) — as responses built once at start: each with an ETag of
/// its content and a strict Content-Security-Policy (no inline code, nothing from other hosts but
/// banner images).
struct StaticAssets: Sendable {
    /// Every file, by the path it is served at.
    static let files =
        WebClient.assets
        + [
            WebClient.Asset(
                path: "/openapi.json", contentType: PreparedReads.jsonContentType.value,
                content: EmbeddedFiles.openapi_json)
        ]

    /// Each file's ETag, by path: hashed once per process (a test process starts hundreds of
    /// services, and hashing the files byte by byte takes a while in a debug build).
    private static let etags = Dictionary(
        uniqueKeysWithValues: files.map { ($0.path, "\"web-\(String(fingerprint($0.content), radix: 36))\"") })

    private let representations: [String: Representation]

    init(cors: CORSPolicy) {
        let pagePolicy = Self.contentSecurityPolicy(framedBy: cors)
        let common = [
            HTTPHeader("X-Content-Type-Options", "nosniff"),
            HTTPHeader("Referrer-Policy", "strict-origin-when-cross-origin"),
            HTTPHeader("Cache-Control", "no-cache"),
            // A page loads these once, then opens its event stream: with no idle connection left
            // to reuse, the browser opens the stream on a fresh one, which the service holds for
            // under 1 KiB instead of libmicrohttpd's 15 (docs/ARCHITECTURE.md).
            HTTPHeader("Connection", "close"),
        ]
        var representations: [String: Representation] = [:]
        for asset in Self.files {
            let policy =
                asset.path == Self.serviceWorkerPath
                ? Self.serviceWorkerPolicy : Self.isAdminPage(asset.path) ? Self.adminPolicy : pagePolicy
            representations[asset.path] = Representation(
                etag: Self.etags[asset.path]!, body: asset.content,
                headers: [
                    HTTPHeader("Content-Type", asset.contentType), HTTPHeader("Content-Security-Policy", policy),
                ] + common)
        }
        self.representations = representations
    }

    /// The paths served, each for GET and HEAD.
    static var paths: [String] { files.map(\.path) }

    func response(_ path: String, ifNoneMatch: String?) -> PreparedResponse {
        representations[path]!.response(ifNoneMatch: ifNoneMatch)
    }

    /// Scripts, styles, requests and frames (the admin page's live preview) only from this
    /// service; banner images from anywhere on the web. The page may be framed by the origins CORS
    /// allows (a shop's home page), else only by this service.
    static func contentSecurityPolicy(framedBy cors: CORSPolicy) -> String {
        contentSecurityPolicy(
            ancestors: cors.allowsAnyOrigin ? "*" : (["'self'"] + cors.origins).joined(separator: " "))
    }

    /// The admin page and its files are framed by this service alone, whatever CORS allows: framed
    /// by another site, the page's requests would still be its own origin's, under the other
    /// site's clicks (clickjacking; docs/ADMIN.md).
    static let adminPolicy = contentSecurityPolicy(ancestors: "'self'")

    static func isAdminPage(_ path: String) -> Bool {
        path == "/admin" || path.hasPrefix("/admin.") || path.hasPrefix("/admin-")
    }

    private static func contentSecurityPolicy(ancestors: String) -> String {
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src http: https: data:; "
            + "connect-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'none'; "
            + "frame-ancestors \(ancestors)"
    }

    static let serviceWorkerPath = "/sw.js"

    /// The service worker's own policy, which governs what it fetches: this service, and banner
    /// images from anywhere on the web, which it keeps for a page that loses the service
    /// (docs/SCREENS.md, offline play).
    static let serviceWorkerPolicy = "default-src 'none'; connect-src 'self' http: https:"

    /// FNV-1a, 64-bit: stable across runs, so browsers keep their copy over restarts.
    static func fingerprint(_ bytes: [UInt8]) -> UInt64 {
        bytes.reduce(0xcbf2_9ce4_8422_2325) { hash, byte in (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    }
}
