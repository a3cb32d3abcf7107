/// What a request asks for, once its path and method are known.
enum Action: Sendable, Equatable {
    case readState
    case readBanners
    case readIndex
    case health
    case command(CommandRoute)
}

/// The endpoints that change the carousel (POST and PUT; the control token guards them).
enum CommandRoute: Sendable, Equatable {
    case next, previous, jump, pause, resume
}

/// The route table of DESIGN.md §3: path → method → action.
enum Routes {
    private static let table: [String: [(method: String, action: Action)]] = [
        "/banner": [("GET", .readState), ("HEAD", .readState)],
        "/banners": [("GET", .readBanners), ("HEAD", .readBanners)],
        "/banner/index": [("GET", .readIndex), ("HEAD", .readIndex), ("PUT", .command(.jump))],
        "/banner/next": [("POST", .command(.next))],
        "/banner/previous": [("POST", .command(.previous))],
        "/banner/pause": [("POST", .command(.pause))],
        "/banner/resume": [("POST", .command(.resume))],
        "/healthz": [("GET", .health), ("HEAD", .health)],
    ]

    /// The action, or the 404 (unknown path) or 405 with `Allow` (known path, other method).
    static func resolve(method: String, path: String) throws(Problem) -> Action {
        guard let methods = table[path] else {
            throw Problem(status: 404, detail: "no route for \(method) \(path)")
        }
        guard let route = methods.first(where: { $0.method == method }) else {
            let allowed = methods.map(\.method).joined(separator: ", ")
            throw Problem(
                status: 405, detail: "\(path) does not allow \(method); allowed: \(allowed)",
                headers: [.init("Allow", allowed)])
        }
        return route.action
    }
}
