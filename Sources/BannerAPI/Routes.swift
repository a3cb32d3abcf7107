/// What a request asks for, once its path and method are known.

enum Action: Sendable, Equatable {
    case read(ReadViews.Resource)
    /// A file of the web client, by its path.
    case web(path: String)
    case health
    case events
    /// A CORS preflight (OPTIONS, when CORS is on); `allow` lists the path's methods.
    case preflight(allow: String)
    case command(CommandRoute)
}

/// The endpoints that change the carousel (POST and PUT; the control token guards them).
enum CommandRoute: Sendable, Equatable {
    case next, previous, jump, pause, resume
}

/// The route table (docs/API.md lists it): path → method → action.
enum Routes {
    private static let table: [String: [(method: String, action: Action)]] = [
        "/banner": [("GET", .read(.state)), ("HEAD", .read(.state))],
        "/banners": [("GET", .read(.banners)), ("HEAD", .read(.banners))],
        "/banner/index": [("GET", .read(.index)), ("HEAD", .read(.index)), ("PUT", .command(.jump))],
        "/banner/events": [("GET", .events)],
        "/banner/next": [("POST", .command(.next))],
        "/banner/previous": [("POST", .command(.previous))],
        "/banner/pause": [("POST", .command(.pause))],
        "/banner/resume": [("POST", .command(.resume))],
        "/healthz": [("GET", .health), ("HEAD", .health)],
    ].merging(StaticAssets.paths.map { ($0, [("GET", .web(path: $0)), ("HEAD", .web(path: $0))]) }) { api, _ in api }

    /// Every path with a route.
    static var paths: [String] { Array(table.keys) }

    /// The methods `path` answers (OPTIONS aside, which only CORS adds).
    static func methods(of path: String) -> [String] { table[path]?.map(\.method) ?? [] }

    /// The action, or the 404 (unknown path) or 405 with `Allow` (known path, other method).
    /// With `preflight`, OPTIONS is answered on every path (CORS is on).
    static func resolve(method: String, path: String, preflight: Bool = false) throws(Problem) -> Action {
        guard let methods = table[path] else {
            throw Problem(status: 404, detail: "no route for \(method) \(path)")
        }
        if let route = methods.first(where: { $0.method == method }) { return route.action }
        let allowed = (methods.map(\.method) + (preflight ? ["OPTIONS"] : [])).joined(separator: ", ")
        if preflight && method == "OPTIONS" { return .preflight(allow: allowed) }
        throw Problem(
            status: 405, detail: "\(path) does not allow \(method); allowed: \(allowed)",
            headers: [.init("Allow", allowed)])
    }
}
