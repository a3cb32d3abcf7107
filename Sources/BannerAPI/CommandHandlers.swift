import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// The endpoints that change the carousel's state: moves, pause and resume (the control role);
/// takeovers (the admin role). Each is checked on the calling thread (body, index, banner), then
/// run in its carousel's engine while the connection waits.
enum CommandRoute: Sendable, Equatable {
    case next, previous, jump, pause, resume
    case startTakeover, endTakeover
}

enum CommandHandlers {
    /// The handler of a command's endpoint.
    static func handler(_ route: CommandRoute) -> Endpoint.Handler {
        { api, request, call throws(Problem) in try command(route, api, request, call) }
    }

    private static func command(
        _ route: CommandRoute, _ api: BannerAPI, _ request: borrowing Request, _ call: Call
    ) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let parsed = try CommandBody.command(for: route, request: request, state: live.engine.snapshot)
        let audience = try QueryValues.audience(of: request)
        let label = BannerAPI.label(request, call.requestID)
        // The answer carries its request's id itself: BannerAPI then leaves it as it is.
        let requestID = call.requestID.map { [HTTPHeader(RequestIDs.header, $0)] } ?? []
        // On the engine's queue: the command goes to the engine and back with no thread woken.
        return .deferred(
            {
                await perform(
                    parsed, on: live, api, by: call.requester, label: label, audience: audience,
                    origin: call.origin, extra: requestID)
            }, on: live.engine.taskExecutor)
    }

    /// Runs a command; answers the state it left, as the screens of the request's `audience` see it.
    private static func perform(
        _ command: CarouselCommand, on live: ServedCarousel, _ api: BannerAPI, by requester: Requester, label: String,
        audience: String?, origin: String?, extra: [HTTPHeader]
    ) async -> PreparedResponse {
        do {
            let state = try await live.perform(command, by: requester)
            api.logger.info("\(label) → \(summary(of: state))")
            return live.stateAnswer(state, audience: audience, origin: origin, extra: extra)
        } catch {
            let problem = Problem.change(error, of: live, ifMatch: nil, refusal: Problem.command)
            return api.refused(problem, label: label, origin: origin)
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
        let takeover = state.takeover.map { ", takeover by '\($0.banner.id)'" } ?? ""
        return "\(position), \(playback)\(takeover), version \(state.version)"
    }
}
