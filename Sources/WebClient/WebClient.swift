/// The built-in web client: the page at `/` with its scripts, style sheet and icon, the
/// embeddable component `/embed.js` with its demo page (docs/EMBEDDING.md), and the admin page at
/// `/admin` (docs/ADMIN.md), as the files in `web/` (edit them as what they are). The
/// EmbedFilesPlugin compiles them in as string literals (`EmbeddedFiles`), so there is nothing to
/// ship beside the binary and no Foundation bundle to find at run time. This module only holds the
/// bytes; BannerAPI serves them (see docs/ARCHITECTURE.md).
public enum WebClient {
    /// One file of the client.
    public struct Asset: Sendable {
        /// Where it is served (`/app.js`).
        public let path: String
        public let contentType: String
        public let content: [UInt8]

        /// `content`: the literals' bytes, one after another (`/embed.js` joins several files).
        public init(path: String, contentType: String, content: StaticString...) {
            self.path = path
            self.contentType = contentType
            self.content = content.flatMap { $0.withUTF8Buffer(Array.init) }
        }
    }

    private static func module(_ path: String, _ content: StaticString) -> Asset {
        Asset(path: path, contentType: "text/javascript; charset=utf-8", content: content)
    }

    public static let assets: [Asset] = [
        Asset(path: "/", contentType: "text/html; charset=utf-8", content: EmbeddedFiles.index_html),
        Asset(path: "/sync.js", contentType: "text/javascript; charset=utf-8", content: EmbeddedFiles.sync_js),
        Asset(path: "/swipe.js", contentType: "text/javascript; charset=utf-8", content: EmbeddedFiles.swipe_js),
        Asset(path: "/app.js", contentType: "text/javascript; charset=utf-8", content: EmbeddedFiles.app_js),
        Asset(path: "/app.css", contentType: "text/css; charset=utf-8", content: EmbeddedFiles.app_css),
        Asset(path: "/favicon.svg", contentType: "image/svg+xml", content: EmbeddedFiles.favicon_svg),
        // The page's service worker (docs/SCREENS.md, offline play), at the root so that its scope
        // is every page address.
        Asset(path: "/sw.js", contentType: "text/javascript; charset=utf-8", content: EmbeddedFiles.sw_js),
        // The component (docs/EMBEDDING.md): the clock, the swipe and the element, in one function
        // so that nothing but the element's name reaches the page that loads it.
        Asset(
            path: "/embed.js", contentType: "text/javascript; charset=utf-8",
            content: "(() => {\n", EmbeddedFiles.sync_js, EmbeddedFiles.swipe_js, EmbeddedFiles.component_js,
            "})();\n"),
        Asset(
            path: "/embed-demo.html", contentType: "text/html; charset=utf-8", content: EmbeddedFiles.embed_demo_html
        ),
        Asset(
            path: "/embed-demo.css", contentType: "text/css; charset=utf-8", content: EmbeddedFiles.embed_demo_css),
        Asset(path: "/admin", contentType: "text/html; charset=utf-8", content: EmbeddedFiles.admin_html),
        Asset(path: "/admin.js", contentType: "text/javascript; charset=utf-8", content: EmbeddedFiles.admin_js),
        // The admin page's views and helpers, ES modules that /admin.js imports (docs/ADMIN.md).
        module("/admin-ui.js", EmbeddedFiles.admin_ui_js),
        module("/admin-api.js", EmbeddedFiles.admin_api_js),
        module("/admin-list.js", EmbeddedFiles.admin_list_js),
        module("/admin-editor.js", EmbeddedFiles.admin_editor_js),
        module("/admin-banners.js", EmbeddedFiles.admin_banners_js),
        module("/admin-schedule.js", EmbeddedFiles.admin_schedule_js),
        module("/admin-timeline.js", EmbeddedFiles.admin_timeline_js),
        module("/admin-stats.js", EmbeddedFiles.admin_stats_js),
        module("/admin-takeover.js", EmbeddedFiles.admin_takeover_js),
        module("/admin-screens.js", EmbeddedFiles.admin_screens_js),
        module("/admin-media.js", EmbeddedFiles.admin_media_js),
        module("/admin-history.js", EmbeddedFiles.admin_history_js),
        module("/admin-pending.js", EmbeddedFiles.admin_pending_js),
        module("/admin-tokens.js", EmbeddedFiles.admin_tokens_js),
        module("/admin-audit.js", EmbeddedFiles.admin_audit_js),
        module("/admin-webhooks.js", EmbeddedFiles.admin_webhooks_js),
        module("/admin-router.js", EmbeddedFiles.admin_router_js),
        module("/admin-carousel.js", EmbeddedFiles.admin_carousel_js),
        Asset(path: "/admin.css", contentType: "text/css; charset=utf-8", content: EmbeddedFiles.admin_css),
    ]
}
