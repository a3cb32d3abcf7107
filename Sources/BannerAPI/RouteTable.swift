import Definitions
import MicroHTTP
import Store

/// Who may call an endpoint (docs/API.md, "Roles"). `Endpoint` has no default for it: an
/// endpoint cannot be declared without deciding who may call it, and the dispatch applies it
/// before the endpoint's handler runs (docs/ARCHITECTURE.md, "Routes").
enum Access: String, Sendable, Equatable, CaseIterable {
    /// Anyone: reads, the page, the service's health.
    case `public`
    /// Anyone, as a screen reporting what it showed or saw (views, receipts): a screen's
    /// reports are held to its own key by the fleet (docs/SCREENS.md), never to a token.
    case screen
    /// Commands: the control role (the admin role includes it) when a control token is set.
    case control
    /// Plays, views and clicks: the stats role (the admin role includes it).
    case stats
    /// Definitions, takeovers, tokens, webhooks, the media library, and what only operators read.
    case admin

    /// Whether pages of other origins may call it (CORS): never what needs the admin or stats
    /// role, which is for tokens and the admin page's own origin.
    var crossOrigin: Bool { self == .public || self == .screen || self == .control }

    /// Whether a caller is named by a token (or by this host's trust).
    var needsCaller: Bool { self != .public && self != .screen }
}

/// Whether the server's fast paths may answer an endpoint outside libmicrohttpd
/// (docs/ARCHITECTURE.md, "The fast paths").
enum FastPath: Sendable, Equatable {
    /// Only libmicrohttpd: a method the read loops do not read (`PUT`, `DELETE`), a large body,
    /// or an answer that waits long (a read of the store).
    case none
    /// A read loop may answer it: at once, or after deferred work (a command), the connection
    /// waiting in the loop.
    case readLoop
    /// The acceptor may hold its event stream.
    case stream
}

/// One endpoint: a method of a path template, who may call it, whether the audit log keeps it,
/// whether the fast paths may answer it, its OpenAPI operation, and its handler. `Routes.table`
/// declares every one.
struct Endpoint: Sendable {
    /// Answers a request the table has routed and authorized: what `call` says is checked already.
    typealias Handler = @Sendable (BannerAPI, borrowing Request, Call) throws(Problem) -> Reply

    let method: String
    /// `/carousels/{name}/banner`; `{name}` right after `/carousels/` is the carousel.
    let template: String
    let access: Access
    /// Whether the request writes what the audit log keeps (docs/AUDIT.md): it gets a request id.
    let audited: Bool
    let fastPath: FastPath
    /// The OpenAPI document's `operationId`; nil for the one endpoint the document leaves out
    /// (a carousel's page, `/carousels/{name}/`).
    let operation: String?
    /// For a write of a definition or its banners: which, so that a change scheduled for later
    /// (docs/SCHEDULED.md) is parsed again by the same rules when it is made.
    let definitionWrite: DefinitionWrite?
    let handle: Handler

    init(
        _ method: String, _ template: String, _ access: Access, audited: Bool = false, fastPath: FastPath = .none,
        operation: String?, definitionWrite: DefinitionWrite? = nil, _ handle: @escaping Handler
    ) {
        self.method = method
        self.template = template
        self.access = access
        self.audited = audited
        self.fastPath = fastPath
        self.operation = operation
        self.definitionWrite = definitionWrite
        self.handle = handle
    }

    /// Whether the template is a carousel's: its rules are scoped to that carousel.
    var isCarouselScoped: Bool { Routes.isCarouselTemplate(template) }
}

/// What a handler is given besides the request: the route it matched and what the table's rules
/// found for it.
struct Call: Sendable {
    let route: Route
    /// Who the request acts as (the history's and the audit log's actor): nil where anyone may call.
    let actor: String?
    /// The request's id (`X-Request-Id`), on a write the audit log keeps.
    let requestID: String?
    /// The origin the answer's CORS headers name; nil when CORS is off, the origin is not allowed,
    /// or the endpoint is not for other origins.
    let origin: String?

    /// Who made a write, for the store (`actor` is set on every endpoint that writes).
    var requester: Requester { Requester(actor: actor ?? "anonymous", requestID: requestID) }
}

/// A request's endpoint and the values its path gave.
struct Route: Sendable {
    let endpoint: Endpoint
    /// The carousel a carousel's path is about (`default` for the bare v1 paths); nil for the
    /// service's paths.
    let carousel: String?
    /// The path's other parameters, in order (`{id}`, `{n}`, a token's `{name}`, `{width}`).
    let first: String?
    let second: String?
    let template: RouteTemplate
}

/// A path template (`/carousels/{name}/banner`) and its position in `Routes.allTemplates`: what
/// metrics count by, found with the route rather than by hashing the template on every request.
struct RouteTemplate: Sendable, Equatable {
    let text: String
    let index: Int
}

/// The route table: every endpoint of `Routes.table` (Endpoints.swift), found by path and method.
enum Routes {
    static let carouselPrefix = "/carousels/{name}"

    /// A carousel's template: `/carousels/{name}…`, or a bare v1 path (the carousel `default`).
    static func isCarouselTemplate(_ template: String) -> Bool {
        template.hasPrefix(carouselPrefix) || v1Paths.contains(template)
    }

    /// The v1 paths (docs/API.md), bare for the carousel `default`: the same endpoints exist below
    /// `/carousels/{name}`.
    static let v1Paths: Set<String> = [
        "/banner", "/banners", "/banner/index", "/banner/events", "/banner/next", "/banner/previous",
        "/banner/pause", "/banner/resume",
    ]

    /// The methods of a path template, in the order declared (OPTIONS aside, which only CORS adds).
    static func methods(of template: String) -> [String] {
        table.filter { $0.template == template }.map(\.method)
    }

    /// Every template a request can match, sorted (what metrics count by).
    static let allTemplates: [String] = Array(Set(table.map(\.template))).sorted()
    private static let templateIndex = Dictionary(uniqueKeysWithValues: allTemplates.enumerated().map { ($1, $0) })

    private static let tree = PathTree(table, templates: templateIndex)

    /// The busiest request, found without walking the tree or hashing its path.
    private static let bannerState: Route = {
        let endpoint = table.first { $0.method == "GET" && $0.template == "/banner" }!
        return Route(
            endpoint: endpoint, carousel: CarouselDefinition.defaultName, first: nil, second: nil,
            template: RouteTemplate(text: "/banner", index: templateIndex["/banner"]!))
    }()

    /// The route, or the 404 (unknown path) or 405 with `Allow` (known path, other method).
    /// With `preflight` (CORS is on), `Allow` lists OPTIONS too.
    static func resolve(method: String, path: String, preflight: Bool = false) throws(Problem) -> Route {
        if path == "/banner" && method == "GET" { return bannerState }
        guard let match = tree.match(path) else {
            throw Problem(status: 404, detail: "no route for \(method) \(path)")
        }
        let node = tree.nodes[match.node]
        guard let index = node.endpoints.first(where: { table[$0].method == method }) else {
            let allowed = allow(node, preflight: preflight)
            throw Problem(
                status: 405, detail: "\(path) does not allow \(method); allowed: \(allowed)",
                headers: [.init("Allow", allowed)])
        }
        return Route(
            endpoint: table[index], carousel: node.isV1 ? CarouselDefinition.defaultName : match.carousel,
            first: match.first, second: match.second, template: node.template!)
    }

    /// A CORS preflight of `path` (OPTIONS): its methods (`allow`), and those other origins may use
    /// (`crossOrigin`, with OPTIONS; nil when none may); nil when no endpoint has that path.
    static func preflight(of path: String) -> (allow: String, crossOrigin: String?, template: RouteTemplate)? {
        guard let match = tree.match(path) else { return nil }
        let node = tree.nodes[match.node]
        let crossOrigin = node.endpoints.map { table[$0] }.filter(\.access.crossOrigin).map(\.method)
        return (
            allow(node, preflight: true),
            crossOrigin.isEmpty ? nil : (crossOrigin + ["OPTIONS"]).joined(separator: ", "),
            node.template!
        )
    }

    /// The template `path` matches, whatever the method; nil when none does.
    static func template(of path: String) -> RouteTemplate? {
        tree.match(path).flatMap { tree.nodes[$0.node].template }
    }

    /// The endpoint of `method` and `path`; nil when there is none.
    static func endpoint(method: String, path: String) -> Endpoint? {
        try? resolve(method: method, path: path).endpoint
    }

    private static func allow(_ node: PathTree.Node, preflight: Bool) -> String {
        (node.endpoints.map { table[$0].method } + (preflight ? ["OPTIONS"] : [])).joined(separator: ", ")
    }
}

/// The table's templates as a tree of path segments: a path is matched one segment at a time,
/// literal segments before parameters, each parameter a whole non-empty segment (or the part of
/// one before a literal suffix: `{width}.webp`).
struct PathTree: Sendable {
    struct Node: Sendable {
        var literals: [String: Int] = [:]
        /// `{id}.webp`'s suffix is `.webp` (bytes).
        var parameters: [(suffix: [UInt8], isCarousel: Bool, child: Int)] = []
        /// Indices into the table, in the order declared.
        var endpoints: [Int] = []
        var template: RouteTemplate?
        /// A bare v1 path: the carousel `default`'s.
        var isV1 = false
    }

    struct Match {
        let node: Int
        var carousel: String?
        var first: String?
        var second: String?
    }

    private(set) var nodes = [Node()]

    init(_ table: [Endpoint], templates: [String: Int]) {
        for (index, endpoint) in table.enumerated() {
            var node = 0
            for (position, segment) in Self.segments(endpoint.template).enumerated() {
                node = child(
                    of: node, for: segment,
                    isCarousel: position == 1 && endpoint.template.hasPrefix(Routes.carouselPrefix))
            }
            precondition(
                !nodes[node].endpoints.contains { table[$0].method == endpoint.method },
                "\(endpoint.method) \(endpoint.template) is declared twice")
            nodes[node].endpoints.append(index)
            nodes[node].template = RouteTemplate(text: endpoint.template, index: templates[endpoint.template]!)
            nodes[node].isV1 = Routes.v1Paths.contains(endpoint.template)
        }
    }

    private mutating func child(of node: Int, for segment: Substring, isCarousel: Bool) -> Int {
        if segment.first == "{", let close = segment.firstIndex(of: "}") {
            let suffix = Array(segment[segment.index(after: close)...].utf8)
            if let existing = nodes[node].parameters.first(where: { $0.suffix == suffix }) { return existing.child }
            nodes.append(Node())
            nodes[node].parameters.append((suffix, isCarousel, nodes.count - 1))
            // The longest suffix is tried first: `{width}.webp` before `{id}`.
            nodes[node].parameters.sort { $0.suffix.count > $1.suffix.count }
            return nodes.count - 1
        }
        if let existing = nodes[node].literals[String(segment)] { return existing }
        nodes.append(Node())
        nodes[node].literals[String(segment)] = nodes.count - 1
        return nodes.count - 1
    }

    /// `/a/b` → `a`, `b`; `/` → one empty segment; `/a/` → `a` and an empty one.
    private static func segments(_ path: String) -> [Substring] {
        path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    }

    /// The node `path` leads to (one with endpoints), with the values of its parameters. Walked
    /// over the path's bytes: every request is routed, receipts thousands of times a second
    /// (docs/PERFORMANCE.md, "What a receipt costs").
    func match(_ path: String) -> Match? {
        var path = path
        return path.withUTF8 { bytes in
            guard bytes.first == UInt8(ascii: "/") else { return nil }
            var found = Match(node: 0)
            guard let node = walk(bytes, from: 1, node: 0, &found), !nodes[node].endpoints.isEmpty else {
                return nil
            }
            return Match(node: node, carousel: found.carousel, first: found.first, second: found.second)
        }
    }

    /// The segment of `path` from `start` to the next `/` (or the end), matched in `node`, then the
    /// rest from the child it leads to; literals first, then parameters, longest suffix first.
    private func walk(_ path: UnsafeBufferPointer<UInt8>, from start: Int, node: Int, _ found: inout Match) -> Int? {
        var end = start
        while end < path.count && path[end] != UInt8(ascii: "/") { end += 1 }
        let segment = UnsafeBufferPointer(rebasing: path[start..<end])
        func next(_ child: Int) -> Int? {
            end == path.count ? child : walk(path, from: end + 1, node: child, &found)
        }
        if !nodes[node].literals.isEmpty, let child = nodes[node].literals[String(decoding: segment, as: UTF8.self)],
            let reached = next(child)
        {
            return reached
        }
        for parameter in nodes[node].parameters {
            let valueCount = segment.count - parameter.suffix.count
            guard valueCount > 0, segment[valueCount...].elementsEqual(parameter.suffix) else { continue }
            let value = String(decoding: segment[..<valueCount], as: UTF8.self)
            let saved = found
            if parameter.isCarousel {
                found.carousel = value
            } else if found.first == nil {
                found.first = value
            } else {
                found.second = value
            }
            if let reached = next(parameter.child) { return reached }
            found = saved
        }
        return nil
    }
}
