import Carousel
import MicroHTTP

/// The HTTP API of DESIGN.md §3. Reads are answered on the calling thread from pre-built
/// responses; commands are checked (route, token, body) on the calling thread, then run in the
/// engine while the connection is suspended. A refused request never reaches the engine.
struct BannerAPI: HTTPHandler {
    let engine: CarouselEngine
    let views: ReadViews
    let controlToken: ControlToken?
    let logger: Logger
    private let health = ReadViews.prepare(Array("{\"status\":\"ok\"}\n".utf8))

    init(engine: CarouselEngine, views: ReadViews, controlToken: ControlToken?, logger: Logger) {
        self.engine = engine
        self.views = views
        self.controlToken = controlToken
        self.logger = logger
    }

    func respond(to request: borrowing Request) -> Reply {
        do {
            switch try Routes.resolve(method: request.method, path: request.path) {
            case .readState: return .prepared(views.state)
            case .readBanners: return .prepared(views.banners)
            case .readIndex: return .prepared(views.index)
            case .health: return .prepared(health)
            case .command(let route):
                try authorize(request)
                let command = try CommandBody.command(
                    for: route, request: request, bannerCount: engine.snapshot.count)
                let label = "\(request.method) \(request.path)"
                return .deferred { await perform(command, label: label) }
            }
        } catch {
            let level: Logger.Level = request.method == "POST" || request.method == "PUT" ? .notice : .debug
            logger.log(level, "\(request.method) \(request.path) refused: \(error.status) \(error.detail)")
            return .response(error.response)
        }
    }

    func respond(to rejection: Rejection) -> Response {
        switch rejection {
        case .bodyTooLarge(let limit, let method, let path):
            logger.notice("\(method) \(path) refused: 413 body larger than \(limit) bytes")
            return Problem(status: 413, detail: "request body larger than \(limit) bytes").response
        case .shuttingDown:
            return Problem(status: 503, detail: "the service is shutting down; retry on another instance or later")
                .response
        }
    }

    private func authorize(_ request: borrowing Request) throws(Problem) {
        guard let controlToken, !controlToken.authorizes(request.header("Authorization")) else { return }
        throw Problem(
            status: 401,
            detail: "missing or wrong bearer token; send Authorization: Bearer <CAROUSEL_CONTROL_TOKEN>",
            headers: [HTTPHeader("WWW-Authenticate", "Bearer")])
    }

    private func perform(_ command: CarouselCommand, label: String) async -> PreparedResponse {
        do {
            let state = try await engine.perform(command)
            logger.info("\(label) → \(Self.summary(of: state))")
            return views.state(of: state)
        } catch {
            let problem = Self.problem(for: error)
            logger.notice("\(label) refused: \(problem.status) \(problem.detail)")
            return PreparedResponse(problem.response)
        }
    }

    /// One line an operator can read: `index 3 of 5, paused until 2026-…Z, version 18`.
    static func summary(of state: Carousel) -> String {
        let position = state.index.map { "index \($0) of \(state.count)" } ?? "no banners"
        let playback =
            switch (state.isPaused, state.pausedUntil) {
            case (false, _): "playing"
            case (true, nil): "paused"
            case (true, let until?): "paused until \(until.rfc3339)"
            }
        return "\(position), \(playback), version \(state.version)"
    }

    static func problem(for error: CarouselError) -> Problem {
        switch error {
        case .noBanners:
            Problem(status: 409, detail: "there are no banners to move to; add banners to the configuration")
        case .indexOutOfRange(let index, let count):
            Problem.unprocessable(
                count == 0
                    ? "index \(index) is out of range: there are no banners"
                    : "index \(index) is out of range: there are \(count) banners (0...\(count - 1))")
        case .pauseDurationOutOfRange(let duration):
            Problem.unprocessable("pause of \(duration.seconds) seconds is out of range")
        }
    }
}
