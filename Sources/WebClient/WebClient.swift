/// The built-in web client: the page at `/` with its script, style sheet and icon, as the files
/// in `web/` (edit them as what they are). SwiftPM compiles them into the binary
/// (`.embedInCode`), so there is nothing to ship beside it and no Foundation bundle to find at
/// run time. This module only holds the bytes; BannerAPI serves them (see docs/ARCHITECTURE.md).
public enum WebClient {
    /// One file of the client.
    public struct Asset: Sendable {
        /// Where it is served (`/app.js`).
        public let path: String
        public let contentType: String
        public let content: [UInt8]

        public init(path: String, contentType: String, content: [UInt8]) {
            self.path = path
            self.contentType = contentType
            self.content = content
        }
    }

    public static let assets: [Asset] = [
        Asset(path: "/", contentType: "text/html; charset=utf-8", content: PackageResources.index_html),
        Asset(path: "/sync.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.sync_js),
        Asset(path: "/app.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.app_js),
        Asset(path: "/app.css", contentType: "text/css; charset=utf-8", content: PackageResources.app_css),
        Asset(path: "/favicon.svg", contentType: "image/svg+xml", content: PackageResources.favicon_svg),
    ]
}
