import MicroHTTP

extension Routes {
    /// Every endpoint the service answers, each declared once: its method and path template, who
    /// may call it, whether the audit log keeps it, whether the fast paths may answer it, its
    /// OpenAPI operation and its handler. The dispatch (`BannerAPI.respond`) applies the rule
    /// before the handler runs. docs/API.md's route list and `GET /openapi.json` are tested
    /// against this table (`RouteTableTests`).
    static let table: [Endpoint] = carousels + service + files

    /// A carousel's endpoints: v1's bare (the carousel `default`) and below `/carousels/{name}`,
    /// the rest below `/carousels/{name}` only.
    private static let carousels: [Endpoint] =
        v1(
            readable("/banner", .public, operation: "getState", CarouselHandlers.state)
                + readable("/banners", .public, operation: "getBanners", CarouselHandlers.banners)
                + readable("/banner/index", .public, operation: "getIndex", CarouselHandlers.index) + [
                    command("PUT", "/banner/index", .control, .jump, "jump"),
                    Endpoint(
                        "GET", "/banner/events", .public, fastPath: .stream, operation: "followEvents",
                        CarouselHandlers.events),
                    command("POST", "/banner/next", .control, .next, "next"),
                    command("POST", "/banner/previous", .control, .previous, "previous"),
                    command("POST", "/banner/pause", .control, .pause, "pause"),
                    command("POST", "/banner/resume", .control, .resume, "resume"),
                ])
        + readable("/carousels/{name}", .public, operation: "getDefinition", CarouselHandlers.definition) + [
            definitionWrite("PUT", "/carousels/{name}", .replace, "replaceCarousel"),
            definitionWrite("PATCH", "/carousels/{name}", .patch, "patchCarousel"),
            definitionWrite("DELETE", "/carousels/{name}", .delete, "deleteCarousel"),
            definitionWrite("POST", "/carousels/{name}/banners", .addBanner, "addBanner"),
        ]
        + readable("/carousels/{name}/banners/{id}", .public, operation: "getBanner", CarouselHandlers.banner) + [
            definitionWrite("PUT", "/carousels/{name}/banners/{id}", .replaceBanner, "replaceBanner"),
            definitionWrite("PATCH", "/carousels/{name}/banners/{id}", .patchBanner, "patchBanner"),
            definitionWrite("DELETE", "/carousels/{name}/banners/{id}", .deleteBanner, "deleteBanner"),
            Endpoint(
                "GET", "/carousels/{name}/banners/{id}/click", .public, fastPath: .readLoop, operation: "clickBanner",
                EngagementHandlers.click),
            definitionWrite("PUT", "/carousels/{name}/order", .reorder, "reorderBanners"),
            command("POST", "/carousels/{name}/takeover", .admin, .startTakeover, "startTakeover"),
            command("DELETE", "/carousels/{name}/takeover", .admin, .endTakeover, "endTakeover"),
        ]
        + readable("/carousels/{name}/timeline", .public, operation: "getTimeline", CarouselHandlers.timeline)
        + readable("/carousels/{name}/preview", .public, operation: "getPreview", CarouselHandlers.preview) + [
            Endpoint(
                "POST", "/carousels/{name}/views", .screen, fastPath: .readLoop, operation: "reportViews",
                EngagementHandlers.views),
            Endpoint(
                "POST", "/carousels/{name}/screens/{id}/receipts", .screen, fastPath: .readLoop,
                operation: "reportReceipts", ScreenHandlers.receipts),
            Endpoint(
                "DELETE", "/carousels/{name}/screens/{id}", .admin, audited: true, operation: "forgetScreen",
                ScreenHandlers.forget),
            Endpoint(
                "GET", "/carousels/{name}/screens", .admin, fastPath: .readLoop, operation: "listCarouselScreens",
                ScreenHandlers.ofCarousel),
        ]
        + readable("/carousels/{name}/stats", .stats, fastPath: .none, operation: "getStats", EngagementHandlers.stats)
        + readable(
            "/carousels/{name}/revisions", .admin, fastPath: .none, operation: "listRevisions",
            HistoryHandlers.revisions)
        + readable(
            "/carousels/{name}/revisions/{n}", .admin, fastPath: .none, operation: "getRevision",
            HistoryHandlers.revision) + [
            Endpoint(
                "POST", "/carousels/{name}/revisions/{n}/restore", .admin, audited: true,
                operation: "restoreRevision", AdminHandlers.restore)
        ]
        + readable(
            "/carousels/{name}/pending", .admin, fastPath: .none, operation: "listPendingChanges",
            HistoryHandlers.pending) + [
            Endpoint(
                "DELETE", "/carousels/{name}/pending/{id}", .admin, audited: true,
                operation: "cancelPendingChange", HistoryHandlers.cancelPending)
        ]
        // The built-in page showing this carousel: a page, not part of the API document.
        + readable("/carousels/{name}/", .public, operation: nil, CarouselHandlers.page)

    /// The service's endpoints, about no one carousel.
    private static let service: [Endpoint] =
        readable("/healthz", .public, operation: "health", ServiceHandlers.health)
        + readable("/readyz", .public, operation: "readiness", ServiceHandlers.readiness)
        + readable("/time", .public, operation: "getTime", ServiceHandlers.time)
        + readable("/metrics", .public, operation: "metrics", ServiceHandlers.metrics) + [
            Endpoint(
                "GET", "/carousels", .public, fastPath: .readLoop, operation: "listCarousels", CarouselHandlers.list),
            Endpoint("POST", "/carousels", .admin, audited: true, operation: "createCarousel", AdminHandlers.create),
            Endpoint("GET", "/screens", .admin, fastPath: .readLoop, operation: "listScreens", ScreenHandlers.all),
            Endpoint(
                "GET", "/screens/events", .admin, fastPath: .stream, operation: "followScreens", ScreenHandlers.events),
            Endpoint("GET", "/media", .admin, operation: "listMedia", MediaHandlers.list),
            Endpoint("POST", "/media", .admin, audited: true, operation: "uploadMedia", MediaHandlers.upload),
        ]
        + readable("/media/{id}", .public, operation: "getMediaOriginal", MediaHandlers.original) + [
            Endpoint("DELETE", "/media/{id}", .admin, audited: true, operation: "deleteMedia", MediaHandlers.delete)
        ]
        + readable("/media/{id}/{width}.webp", .public, operation: "getMediaVariant", MediaHandlers.variant) + [
            Endpoint("GET", "/tokens", .admin, operation: "listTokens", TokenHandlers.list),
            Endpoint("POST", "/tokens", .admin, audited: true, operation: "createToken", TokenHandlers.create),
            Endpoint("DELETE", "/tokens/{name}", .admin, audited: true, operation: "revokeToken", TokenHandlers.revoke),
        ]
        + readable("/webhooks", .admin, fastPath: .none, operation: "listWebhooks", WebhookHandlers.list) + [
            Endpoint("POST", "/webhooks", .admin, audited: true, operation: "createWebhook", WebhookHandlers.create)
        ]
        + readable("/webhooks/{id}", .admin, fastPath: .none, operation: "getWebhook", WebhookHandlers.webhook) + [
            Endpoint(
                "DELETE", "/webhooks/{id}", .admin, audited: true, operation: "deleteWebhook", WebhookHandlers.delete)
        ]
        + readable(
            "/webhooks/{id}/deliveries", .admin, fastPath: .none, operation: "listWebhookDeliveries",
            WebhookHandlers.deliveries)
        + readable("/audit", .admin, fastPath: .none, operation: "getAuditLog", HistoryHandlers.auditLog)

    /// The web client's files and the OpenAPI document, each at its own path (`StaticAssets`).
    private static let files: [Endpoint] = StaticAssets.paths.flatMap { path in
        readable(path, .public, operation: fileOperation(path), ServiceHandlers.file)
    }

    /// A file's operation: `web` and the words of its path (`/admin-ui.js`: `webAdminUiJs`; `/`: `webPage`).
    static func fileOperation(_ path: String) -> String {
        let words = path.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).map {
            $0.prefix(1).uppercased() + $0.dropFirst()
        }
        return "web" + (words.isEmpty ? "Page" : words.joined())
    }

    /// GET and HEAD of the same handler; HEAD's operation is GET's with `Head`.
    private static func readable(
        _ template: String, _ access: Access, fastPath: FastPath = .readLoop, operation: String?,
        _ handle: @escaping Endpoint.Handler
    ) -> [Endpoint] {
        [
            Endpoint("GET", template, access, fastPath: fastPath, operation: operation, handle),
            Endpoint("HEAD", template, access, fastPath: fastPath, operation: operation.map { $0 + "Head" }, handle),
        ]
    }

    /// A command: audited, its body checked before it runs in the carousel's engine; a read loop
    /// answers it when it is a `POST` (the methods they read: docs/ARCHITECTURE.md).
    private static func command(
        _ method: String, _ template: String, _ access: Access, _ command: CommandRoute, _ operation: String
    ) -> Endpoint {
        Endpoint(
            method, template, access, audited: true, fastPath: method == "POST" ? .readLoop : .none,
            operation: operation, CommandHandlers.handler(command))
    }

    /// A write of a definition or its banners: the admin role's, audited, and made again by the
    /// same rules when it was scheduled for later.
    private static func definitionWrite(
        _ method: String, _ template: String, _ write: DefinitionWrite, _ operation: String
    ) -> Endpoint {
        Endpoint(
            method, template, .admin, audited: true, operation: operation, definitionWrite: write,
            AdminHandlers.handler(write))
    }

    /// v1's endpoints, bare for the carousel `default`, and each below `/carousels/{name}` too,
    /// its operation named `…InCarousel`.
    private static func v1(_ endpoints: [Endpoint]) -> [Endpoint] {
        endpoints
            + endpoints.map {
                Endpoint(
                    $0.method, carouselPrefix + $0.template, $0.access, audited: $0.audited, fastPath: $0.fastPath,
                    operation: $0.operation.map { $0 + "InCarousel" }, definitionWrite: $0.definitionWrite, $0.handle)
            }
    }
}
