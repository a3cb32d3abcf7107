import Carousel
import Logging
import MicroHTTP

/// The HTTP API (docs/API.md). Reads are answered on the calling thread from pre-built
/// responses; commands are checked (route, token, body) on the calling thread, then run in the
/// engine while the connection is suspended. A refused request never reaches the engine.
public struct BannerAPI: HTTPHandler {
    let engine: CarouselEngine
    let views: ReadViews
    let events: EventHub
    let web: StaticAssets
    let controlToken: ControlToken?
    let cors: CORSPolicy
    let logger: Logger
    /// No validator to revalidate with, so nothing may keep a copy: a cached "ok" would hide a dead process.
    private let health = PreparedResponse(
        Response(
            status: 200,
            headers: [ReadViews.jsonContentType, HTTPHeader("Cache-Control", "no-store")],
            body: Array("{\"status\":\"ok\"}\n".utf8)))

    init(
        engine: CarouselEngine, views: ReadViews, events: EventHub, web: StaticAssets, controlToken: ControlToken?,
        cors: CORSPolicy, logger: Logger
    ) {
        self.engine = engine
        self.views = views
        self.events = events
        self.web = web
        self.controlToken = controlToken
        self.cors = cors
        self.logger = logger
    }

    public func respond(to request: borrowing Request) -> Reply {
        // Only looked up when CORS is on: reads stay one header lookup (If-None-Match) otherwise.
        let origin = cors.isEnabled ? cors.allowedOrigin(for: request.header("Origin")) : nil
        do {
            switch try Routes.resolve(method: request.method, path: request.path, preflight: cors.isEnabled) {
            case .read(let resource):
                return .prepared(
                    views.response(resource, origin: origin, ifNoneMatch: request.header("If-None-Match")))
            case .health:
                return .prepared(health)
            case .web(let path):
                return .prepared(web.response(path, ifNoneMatch: request.header("If-None-Match")))
            case .events:
                return .stream(events.subscribe(headers: cors.headers(for: origin)))
            case .preflight(let allow):
                return .response(preflight(allow: allow, origin: origin))
            case .command(let route):
                try authorize(request)
                let command = try CommandBody.command(
                    for: route, request: request, bannerCount: engine.snapshot.count)
                let label = "\(request.method) \(request.path)"
                return .deferred { await perform(command, label: label, origin: origin) }
            }
        } catch {
            let level: Logger.Level = request.method == "POST" || request.method == "PUT" ? .notice : .debug
            logger.log(level, "\(request.method) \(request.path) refused: \(error.status) \(error.detail)")
            var problem = error
            problem.headers += cors.headers(for: origin)
            return .response(problem.response)
        }
    }

    /// 204 with the path's methods; the CORS grant only for an allowed origin.
    private func preflight(allow: String, origin: String?) -> Response {
        var headers = [HTTPHeader("Allow", allow)] + cors.headers(for: origin)
        if origin != nil {
            headers += [
                HTTPHeader("Access-Control-Allow-Methods", allow),
                HTTPHeader("Access-Control-Allow-Headers", CORSPolicy.allowedHeaders),
                HTTPHeader("Access-Control-Max-Age", "600"),
            ]
        }
        return Response(status: 204, headers: headers)
    }

    public func respond(to rejection: Rejection) -> Response {
        switch rejection {
        case .bodyTooLarge(let limit, let method, let path):
            logger.notice("\(method) \(path) refused: 413 body larger than \(limit) bytes")
            return Problem(status: 413, detail: "request body larger than \(limit) bytes").response
        case .shuttingDown:
            return Problem(status: 503, detail: "the service is shutting down; retry on another instance or later")
                .response
        case .malformed(let reason, let method, let path):
            logger.notice("\(method) \(path) refused: 400 \(reason)")
            return Problem.badRequest(reason).response
        }
    }

    private func authorize(_ request: borrowing Request) throws(Problem) {
        guard let controlToken, !controlToken.authorizes(request.header("Authorization")) else { return }
        throw Problem(
            status: 401,
            detail: "missing or wrong bearer token; send Authorization: Bearer <CAROUSEL_CONTROL_TOKEN>",
            headers: [HTTPHeader("WWW-Authenticate", "Bearer")])
    }

    private func perform(_ command: CarouselCommand, label: String, origin: String?) async -> PreparedResponse {
        do {
            let state = try await engine.perform(command)
            logger.info("\(label) → \(Self.summary(of: state))")
            return views.state(of: state, origin: origin)
        } catch {
            var problem = Self.problem(for: error)
            logger.notice("\(label) refused: \(problem.status) \(problem.detail)")
            problem.headers += cors.headers(for: origin)
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
