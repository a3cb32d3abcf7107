import Definitions
import Store

/// What a request asks for, once its path and method are known.
enum Action: Sendable, Equatable {
    case read(ReadViews.Resource)
    /// A file of the web client, by its path.
    case web(path: String)
    case health
    /// `GET /readyz`: 200 when the store can be reached and the carousels are loaded.
    case readiness
    /// `GET /time`: the service's clock, for screens that flip in step (docs/SCREENS.md).
    case time
    /// `GET /metrics`: Prometheus' text format (docs/METRICS.md).
    case metrics
    case events
    /// A CORS preflight (OPTIONS, when CORS is on); `allow` lists the path's methods,
    /// `crossOrigin` those other origins may use (none of the admin role's), nil when none.
    case preflight(allow: String, crossOrigin: String?)
    case command(CommandRoute)
    /// `GET /carousels`
    case listCarousels
    /// `POST /carousels`
    case createCarousel
    /// `GET /carousels/{name}`: the definition.
    case definition
    /// `GET /carousels/{name}/banners/{id}`
    case banner(id: String)
    /// `GET /carousels/{name}/timeline`: the changes planned from now.
    case timeline
    /// `GET /carousels/{name}/preview?at=&audience=`: the state planned at an instant.
    case preview
    /// `POST /carousels/{name}/views`: views screens report (docs/STATS.md).
    case views
    /// `GET /carousels/{name}/banners/{id}/click`: to the banner's link, counted.
    case click(id: String)
    /// `GET /carousels/{name}/stats`: plays, views and clicks (the admin role).
    case stats
    /// `GET /screens`: every carousel's screens (the admin role, docs/SCREENS.md).
    case allScreens
    /// `GET /carousels/{name}/screens`: one carousel's screens (the admin role).
    case carouselScreens
    /// `GET /screens/events`: screens' state changes as they happen (the admin role).
    case screenEvents
    /// `POST /carousels/{name}/screens/{id}/receipts`: what a screen showed, when (public).
    case receipts(screen: String)
    case admin(AdminRoute)
    /// `GET /media`: the library (the admin role, docs/MEDIA.md).
    case listMedia
    /// `POST /media`: an upload (the admin role).
    case uploadMedia
    /// `GET /media/{id}`, `GET /media/{id}/{width}.webp`: a file (public).
    case mediaFile(id: String, MediaFile)
    /// `DELETE /media/{id}` (the admin role).
    case deleteMedia(id: String)
    /// `GET /carousels/{name}/revisions`: the history kept, newest first (the admin role,
    /// docs/HISTORY.md).
    case revisions
    /// `GET /carousels/{name}/revisions/{n}`: the definition as it was (the admin role).
    case revision(String)
    /// `POST /carousels/{name}/revisions/{n}/restore`: a new revision equal to n (the admin role).
    case restoreRevision(String)
    /// `GET /tokens`: the named tokens, without secrets (the admin role, docs/TOKENS.md).
    case listTokens
    /// `POST /tokens`: a new named token, its secret in the answer (the admin role).
    case createToken
    /// `DELETE /tokens/{name}` (the admin role).
    case revokeToken(name: String)
    /// `GET /audit`: the audit log, newest first (the admin role, docs/AUDIT.md).
    case auditLog
    /// `GET /carousels/{name}/pending`: its scheduled changes, soonest first (the admin role,
    /// docs/SCHEDULED.md).
    case pendingChanges
    /// `DELETE /carousels/{name}/pending/{id}`: a scheduled change cancelled (the admin role).
    case cancelPending(String)
    /// `GET /webhooks`: the webhooks, without secrets (the admin role, docs/WEBHOOKS.md).
    case listWebhooks
    /// `POST /webhooks`: a new webhook (the admin role).
    case createWebhook
    /// `GET /webhooks/{id}` (the admin role).
    case webhook(String)
    /// `DELETE /webhooks/{id}` (the admin role).
    case deleteWebhook(String)
    /// `GET /webhooks/{id}/deliveries`: its deliveries, newest first (the admin role).
    case deliveries(String)
}

extension Action {
    /// Whether the admin role is needed. Admin routes are for tokens and for the admin page's
    /// own origin: CORS never grants them (docs/API.md, CORS).
    var needsAdmin: Bool {
        switch self {
        case .createCarousel, .admin, .stats, .allScreens, .carouselScreens, .screenEvents, .listMedia, .uploadMedia,
            .deleteMedia, .revisions, .revision, .restoreRevision, .listTokens, .createToken, .revokeToken, .auditLog,
            .pendingChanges, .cancelPending, .listWebhooks, .createWebhook, .webhook, .deleteWebhook, .deliveries:
            true
        case .command(let command): command.needsAdmin
        default: false
        }
    }
    /// Whether the request writes something the audit log keeps (docs/AUDIT.md): its response
    /// carries the request's id.
    var isAudited: Bool {
        switch self {
        case .command, .createCarousel, .admin, .uploadMedia, .deleteMedia, .restoreRevision, .createToken,
            .revokeToken, .cancelPending, .createWebhook, .deleteWebhook:
            true
        default: false
        }
    }
}

/// The endpoints that change the carousel's state: moves, pause and resume (the control role);
/// takeovers (the admin role).
enum CommandRoute: Sendable, Equatable {
    case next, previous, jump, pause, resume
    case startTakeover, endTakeover

    /// Whether the admin role is needed rather than control.
    var needsAdmin: Bool { self == .startTakeover || self == .endTakeover }
}

/// The endpoints that change a carousel's definition (the admin role).
enum AdminRoute: Sendable, Equatable {
    case replace, patch, delete, addBanner, reorder
    case replaceBanner(id: String)
    case patchBanner(id: String)
    case deleteBanner(id: String)
}

/// A request's action, the carousel it is about (`default` for the bare v1 paths), and the path
/// template it matched (`/carousels/{name}/banner`: what metrics count by).
struct Route: Sendable, Equatable {
    let action: Action
    let carousel: String
    let template: RouteTemplate
}

/// A path template (`/carousels/{name}/banner`) and its position in `Routes.allTemplates`: what
/// metrics count by, found with the route rather than by hashing the template on every request.
struct RouteTemplate: Sendable, Equatable {
    let text: String
    let index: Int
}

/// The route table (docs/API.md lists it): path → method → action. Every path of a carousel
/// exists as `/carousels/{name}<path>`; the v1 ones also bare, for the carousel `default`.
enum Routes {
    private typealias Methods = [(method: String, action: Action)]

    private static func readable(_ action: Action) -> Methods { [("GET", action), ("HEAD", action)] }

    /// A carousel's v1 paths, bare or below `/carousels/{name}`.
    private static let v1: [String: Methods] = [
        "/banner": readable(.read(.state)),
        "/banners": readable(.read(.banners)),
        "/banner/index": readable(.read(.index)) + [("PUT", .command(.jump))],
        "/banner/events": [("GET", .events)],
        "/banner/next": [("POST", .command(.next))],
        "/banner/previous": [("POST", .command(.previous))],
        "/banner/pause": [("POST", .command(.pause))],
        "/banner/resume": [("POST", .command(.resume))],
    ]

    /// Paths that are not a carousel's.
    private static let service: [String: Methods] = [
        "/healthz": readable(.health),
        "/readyz": readable(.readiness),
        "/time": readable(.time),
        "/metrics": readable(.metrics),
        "/carousels": [("GET", .listCarousels), ("POST", .createCarousel)],
        "/screens": [("GET", .allScreens)],
        "/screens/events": [("GET", .screenEvents)],
        "/media": [("GET", .listMedia), ("POST", .uploadMedia)],
        "/tokens": [("GET", .listTokens), ("POST", .createToken)],
        "/webhooks": readable(.listWebhooks) + [("POST", .createWebhook)],
        "/audit": readable(.auditLog),
    ].merging(StaticAssets.paths.map { ($0, readable(.web(path: $0))) }) { api, _ in api }

    /// A carousel's paths below `/carousels/{name}`: v1's, and the admin API's.
    private static let scoped: [String: Methods] = v1.merging([
        "": readable(.definition) + [
            ("PUT", .admin(.replace)), ("PATCH", .admin(.patch)), ("DELETE", .admin(.delete)),
        ],
        "/banners": [("POST", .admin(.addBanner))],
        "/order": [("PUT", .admin(.reorder))],
        "/takeover": [("POST", .command(.startTakeover)), ("DELETE", .command(.endTakeover))],
        "/timeline": readable(.timeline),
        "/preview": readable(.preview),
        "/views": [("POST", .views)],
        "/stats": readable(.stats),
        "/screens": [("GET", .carouselScreens)],
        "/revisions": readable(.revisions),
        "/pending": readable(.pendingChanges),
        // The built-in page, showing this carousel.
        "/": readable(.web(path: "/")),
    ]) { v1, admin in v1 + admin }

    private static func bannerMethods(_ id: String) -> Methods {
        readable(.banner(id: id)) + [
            ("PUT", .admin(.replaceBanner(id: id))), ("PATCH", .admin(.patchBanner(id: id))),
            ("DELETE", .admin(.deleteBanner(id: id))),
        ]
    }

    static let carouselPrefix = "/carousels/{name}"
    private static let bannerSuffix = "/banners/{id}"
    private static let bannerTemplate = carouselPrefix + bannerSuffix
    private static let clickSuffix = "/click"
    private static let clickTemplate = bannerTemplate + clickSuffix

    private static func clickMethods(_ id: String) -> Methods { [("GET", .click(id: id))] }

    private static let revisionsPrefix = "/revisions/"
    private static let restoreSuffix = "/restore"
    private static let revisionTemplate = carouselPrefix + revisionsPrefix + "{n}"
    private static let restoreTemplate = revisionTemplate + restoreSuffix
    private static func revisionMethods(_ n: String) -> Methods { readable(.revision(n)) }
    private static func restoreMethods(_ n: String) -> Methods { [("POST", .restoreRevision(n))] }

    private static let mediaPrefix = "/media/"
    private static let mediaTemplate = "/media/{id}"
    private static let mediaVariantTemplate = "/media/{id}/{width}.webp"
    private static func mediaMethods(_ id: String) -> Methods {
        readable(.mediaFile(id: id, .original)) + [("DELETE", .deleteMedia(id: id))]
    }
    private static func mediaVariantMethods(_ id: String, width: Int) -> Methods {
        readable(.mediaFile(id: id, .variant(width: width)))
    }

    private static let pendingPrefix = "/pending/"
    private static let pendingTemplate = carouselPrefix + pendingPrefix + "{id}"
    private static func pendingMethods(_ id: String) -> Methods { [("DELETE", .cancelPending(id))] }

    private static let tokensPrefix = "/tokens/"
    private static let tokenTemplate = "/tokens/{name}"
    private static func tokenMethods(_ name: String) -> Methods { [("DELETE", .revokeToken(name: name))] }

    private static let webhooksPrefix = "/webhooks/"
    private static let webhookTemplate = "/webhooks/{id}"
    private static func webhookMethods(_ id: String) -> Methods {
        readable(.webhook(id)) + [("DELETE", .deleteWebhook(id))]
    }

    private static let deliveriesSuffix = "/deliveries"
    private static let deliveriesTemplate = webhookTemplate + deliveriesSuffix
    private static func deliveriesMethods(_ id: String) -> Methods { readable(.deliveries(id)) }

    private static let receiptsPrefix = "/screens/"
    private static let receiptsSuffix = "/receipts"
    private static let receiptsTemplate = carouselPrefix + receiptsPrefix + "{id}" + receiptsSuffix
    private static func receiptsMethods(_ screen: String) -> Methods { [("POST", .receipts(screen: screen))] }

    /// The template of each bare path (itself) and of each path below a carousel, built once.
    private static let bareTemplates = Dictionary(
        uniqueKeysWithValues: Set(v1.keys).union(service.keys).map { ($0, template($0)) })
    private static let scopedTemplates = Dictionary(
        uniqueKeysWithValues: scoped.keys.map { ($0, template(carouselPrefix + $0)) })
    private static let bannerStateTemplate = template("/banner")
    private static let bannerRouteTemplate = template(bannerTemplate)
    private static let clickRouteTemplate = template(clickTemplate)
    private static let receiptsRouteTemplate = template(receiptsTemplate)
    private static let revisionRouteTemplate = template(revisionTemplate)
    private static let restoreRouteTemplate = template(restoreTemplate)
    private static let mediaRouteTemplate = template(mediaTemplate)
    private static let tokenRouteTemplate = template(tokenTemplate)
    private static let webhookRouteTemplate = template(webhookTemplate)
    private static let deliveriesRouteTemplate = template(deliveriesTemplate)
    private static let pendingRouteTemplate = template(pendingTemplate)
    private static let mediaVariantRouteTemplate = template(mediaVariantTemplate)

    /// Every path template with a route, as the OpenAPI document writes them.
    static var paths: [String] { Array(templates.keys) }

    /// The methods of a path template (OPTIONS aside, which only CORS adds).
    static func methods(of template: String) -> [String] { templates[template]?.map(\.method) ?? [] }

    private static let templates: [String: Methods] = {
        var all = v1.merging(service) { a, _ in a }
        for (path, methods) in scoped { all[carouselPrefix + path] = methods }
        all[carouselPrefix + bannerSuffix] = bannerMethods("{id}")
        all[clickTemplate] = clickMethods("{id}")
        all[receiptsTemplate] = receiptsMethods("{id}")
        all[revisionTemplate] = revisionMethods("{n}")
        all[restoreTemplate] = restoreMethods("{n}")
        all[mediaTemplate] = mediaMethods("{id}")
        all[tokenTemplate] = tokenMethods("{name}")
        all[webhookTemplate] = webhookMethods("{id}")
        all[deliveriesTemplate] = deliveriesMethods("{id}")
        all[pendingTemplate] = pendingMethods("{id}")
        all[mediaVariantTemplate] = mediaVariantMethods("{id}", width: 0)
        all[carouselPrefix + "/"] = nil  // the page, not part of the API document
        return all
    }()

    /// The route, or the 404 (unknown path) or 405 with `Allow` (known path, other method).
    /// With `preflight`, OPTIONS is answered on every path (CORS is on).
    static func resolve(method: String, path: String, preflight: Bool = false) throws(Problem) -> Route {
        // The busiest request, without hashing its path or retaining a table (a reference count
        // both cores would write).
        if path == "/banner" && (method == "GET" || method == "HEAD") {
            return Route(action: .read(.state), carousel: CarouselDefinition.defaultName, template: bannerStateTemplate)
        }
        let (methods, carousel, template) = try lookUp(path, method: method)
        if let route = methods.first(where: { $0.method == method }) {
            return Route(action: route.action, carousel: carousel, template: template)
        }
        let allowed = (methods.map(\.method) + (preflight ? ["OPTIONS"] : [])).joined(separator: ", ")
        if preflight && method == "OPTIONS" {
            let crossOrigin = methods.filter { !$0.action.needsAdmin }.map(\.method)
            return Route(
                action: .preflight(
                    allow: allowed,
                    crossOrigin: crossOrigin.isEmpty ? nil : (crossOrigin + ["OPTIONS"]).joined(separator: ", ")),
                carousel: carousel, template: template)
        }
        throw Problem(
            status: 405, detail: "\(path) does not allow \(method); allowed: \(allowed)",
            headers: [.init("Allow", allowed)])
    }

    /// The template `path` matches, or nil.
    static func template(of path: String) -> RouteTemplate? {
        (try? lookUp(path, method: "GET"))?.template
    }

    /// Every template a request can match, sorted: the API's and the page's (what metrics count by).
    static let allTemplates: [String] = (templates.keys.map { $0 } + [carouselPrefix + "/"]).sorted()
    private static let templateIndex = Dictionary(uniqueKeysWithValues: allTemplates.enumerated().map { ($1, $0) })

    private static func template(_ text: String) -> RouteTemplate {
        RouteTemplate(text: text, index: templateIndex[text]!)
    }

    private static func lookUp(_ path: String, method: String) throws(Problem) -> (
        Methods, carousel: String, template: RouteTemplate
    ) {
        // A carousel's paths first: no bare path starts with `/carousels/`. Matched on the UTF-8
        // bytes: every separator is ASCII, and a screen's receipts come a thousand a second.
        if let (name, below) = split(carouselPath: path) {
            if let methods = scoped[below] { return (methods, name, scopedTemplates[below]!) }
            if let screen = segment(of: below, between: receiptsPrefix, and: receiptsSuffix) {
                return (receiptsMethods(screen), name, receiptsRouteTemplate)
            }
            if let id = segment(of: below, between: bannerPrefix, and: "") {
                return (bannerMethods(id), name, bannerRouteTemplate)
            }
            if let clicked = segment(of: below, between: bannerPrefix, and: clickSuffix) {
                return (clickMethods(clicked), name, clickRouteTemplate)
            }
            if let n = segment(of: below, between: revisionsPrefix, and: "") {
                return (revisionMethods(n), name, revisionRouteTemplate)
            }
            if let n = segment(of: below, between: revisionsPrefix, and: restoreSuffix) {
                return (restoreMethods(n), name, restoreRouteTemplate)
            }
            if let id = segment(of: below, between: pendingPrefix, and: "") {
                return (pendingMethods(id), name, pendingRouteTemplate)
            }
        }
        if path.utf8.starts(with: mediaPrefix.utf8) {
            return try mediaFile(path)
        }
        if let name = segment(of: path, between: tokensPrefix, and: "") {
            return (tokenMethods(name), CarouselDefinition.defaultName, tokenRouteTemplate)
        }
        if let id = segment(of: path, between: webhooksPrefix, and: "") {
            return (webhookMethods(id), CarouselDefinition.defaultName, webhookRouteTemplate)
        }
        if let id = segment(of: path, between: webhooksPrefix, and: deliveriesSuffix) {
            return (deliveriesMethods(id), CarouselDefinition.defaultName, deliveriesRouteTemplate)
        }
        if let methods = v1[path] ?? service[path] {
            return (methods, CarouselDefinition.defaultName, bareTemplates[path]!)
        }
        throw Problem(status: 404, detail: "no route for \(method) \(path)")
    }

    /// `/media/{id}` or `/media/{id}/{width}.webp`: a well-formed id (64 hexadecimal digits) and
    /// one of the variant widths, else 404 (there is no such file).
    private static func mediaFile(_ path: String) throws(Problem) -> (
        Methods, carousel: String, template: RouteTemplate
    ) {
        guard let (id, width) = MediaReference.file(atPath: path) else {
            throw Problem(status: 404, detail: "no media file \(path); GET /media lists the library")
        }
        guard let width else { return (mediaMethods(id), CarouselDefinition.defaultName, mediaRouteTemplate) }
        return (mediaVariantMethods(id, width: width), CarouselDefinition.defaultName, mediaVariantRouteTemplate)
    }

    private static let carouselsSlash = "/carousels/"
    private static let bannerPrefix = "/banners/"

    /// `/carousels/{name}{below}` split, the name not empty; nil for any other path.
    private static func split(carouselPath path: String) -> (name: String, below: String)? {
        let bytes = path.utf8
        guard bytes.starts(with: carouselsSlash.utf8) else { return nil }
        let nameStart = bytes.index(bytes.startIndex, offsetBy: carouselsSlash.utf8.count)
        let nameEnd = bytes[nameStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
        guard nameStart < nameEnd else { return nil }
        return (String(path[nameStart..<nameEnd]), String(path[nameEnd...]))
    }

    /// The one non-empty segment (no `/`) between `prefix` and `suffix` that make up `text`.
    private static func segment(of text: String, between prefix: String, and suffix: String) -> String? {
        let bytes = text.utf8
        let (head, tail) = (prefix.utf8.count, suffix.utf8.count)
        guard bytes.count > head + tail, bytes.starts(with: prefix.utf8), bytes.suffix(tail).elementsEqual(suffix.utf8)
        else { return nil }
        let start = bytes.index(bytes.startIndex, offsetBy: head)
        let end = bytes.index(bytes.endIndex, offsetBy: -tail)
        guard !bytes[start..<end].contains(UInt8(ascii: "/")) else { return nil }
        return String(text[start..<end])
    }
}
