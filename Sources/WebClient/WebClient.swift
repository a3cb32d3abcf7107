/// The built-in web client: the page at `/` with its scripts, style sheet and icon, the
/// embeddable component `/embed.js` with its demo page (docs/EMBEDDING.md), and the admin page at
/// `/admin` (docs/ADMIN.md), as the files in `web/`
/// (edit them as what they are). SwiftPM compiles them into the binary
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

    /// `/embed.js`, the component (docs/EMBEDDING.md): the clock, the swipe and the element, in one
    /// function so that nothing but the element's name reaches the page that loads it.
    static let embedScript =
        Array("(() => {\n".utf8) + PackageResources.sync_js + PackageResources.swipe_js
        + PackageResources.component_js + Array("})();\n".utf8)

    private static func module(_ path: String, _ content: [UInt8]) -> Asset {
        Asset(path: path, contentType: "text/javascript; charset=utf-8", content: content)
    }

    public static let assets: [Asset] = [
        Asset(path: "/", contentType: "text/html; charset=utf-8", content: PackageResources.index_html),
        Asset(path: "/sync.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.sync_js),
        Asset(path: "/swipe.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.swipe_js),
        Asset(path: "/app.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.app_js),
        Asset(path: "/app.css", contentType: "text/css; charset=utf-8", content: PackageResources.app_css),
        Asset(path: "/favicon.svg", contentType: "image/svg+xml", content: PackageResources.favicon_svg),
        // The page's service worker (docs/SCREENS.md, offline play), at the root so that its scope
        // is every page address.
        Asset(path: "/sw.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.sw_js),
        Asset(path: "/embed.js", contentType: "text/javascript; charset=utf-8", content: embedScript),
        Asset(
            path: "/embed-demo.html", contentType: "text/html; charset=utf-8", content: PackageResources.embed_demo_html
        ),
        Asset(
            path: "/embed-demo.css", contentType: "text/css; charset=utf-8", content: PackageResources.embed_demo_css),
        Asset(path: "/admin", contentType: "text/html; charset=utf-8", content: PackageResources.admin_html),
        Asset(path: "/admin.js", contentType: "text/javascript; charset=utf-8", content: PackageResources.admin_js),
        // The admin page's views and helpers, ES modules that /admin.js imports (docs/ADMIN.md).
        module("/admin-ui.js", PackageResources.admin_ui_js),
        module("/admin-api.js", PackageResources.admin_api_js),
        module("/admin-list.js", PackageResources.admin_list_js),
        module("/admin-editor.js", PackageResources.admin_editor_js),
        module("/admin-banners.js", PackageResources.admin_banners_js),
        module("/admin-schedule.js", PackageResources.admin_schedule_js),
        module("/admin-timeline.js", PackageResources.admin_timeline_js),
        module("/admin-stats.js", PackageResources.admin_stats_js),
        module("/admin-takeover.js", PackageResources.admin_takeover_js),
        module("/admin-screens.js", PackageResources.admin_screens_js),
        module("/admin-media.js", PackageResources.admin_media_js),
        module("/admin-history.js", PackageResources.admin_history_js),
        module("/admin-pending.js", PackageResources.admin_pending_js),
        module("/admin-tokens.js", PackageResources.admin_tokens_js),
        module("/admin-audit.js", PackageResources.admin_audit_js),
        module("/admin-webhooks.js", PackageResources.admin_webhooks_js),
        module("/admin-router.js", PackageResources.admin_router_js),
        module("/admin-carousel.js", PackageResources.admin_carousel_js),
        Asset(path: "/admin.css", contentType: "text/css; charset=utf-8", content: PackageResources.admin_css),
    ]
}
