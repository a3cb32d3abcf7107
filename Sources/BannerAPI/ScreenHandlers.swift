import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// The fleet over HTTP (docs/SCREENS.md): screens heard from as they read, their receipts, and
/// the lists and event stream operators watch.
enum ScreenHandlers {
    /// A poll from `screen` of `audience`: heard when the fleet can keep one more and the poll
    /// carries the key that claimed the screen, if one did. A read is never refused for either: a
    /// screen past the fleet's limit (`maxScreens`), or a stranger naming a claimed screen, is
    /// served, and changes nothing in the fleet.
    static func hear(
        _ screen: ScreenID, of audience: String?, with key: ScreenKey?, _ api: BannerAPI, _ request: borrowing Request,
        _ call: Call
    ) throws(Problem) {
        let live = try api.carousel(call)
        try? api.fleet.hear(
            screen, on: live, userAgent: request.header("User-Agent"), audience: audience, screenKey: key)
    }

    /// `POST /carousels/{name}/screens/{id}/receipts`: what a screen showed, when.
    static func receipts(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let screen = try ScreenRequests.screen(inPath: call.route.first!)
        let receipts = try ScreenRequests.receipts(of: request)
        let audience = try QueryValues.audience(of: request)
        let key = try ScreenRequests.screenKey(of: request)
        do throws(ScreenRefusal) {
            try api.fleet.report(
                receipts, from: screen, on: live, userAgent: request.header("User-Agent"), audience: audience,
                screenKey: key)
        } catch {
            throw ScreenRequests.problem(error)
        }
        return .prepared(api.noContent(for: call.origin))
    }

    /// `DELETE /carousels/{name}/screens/{id}`: the screen forgotten, with its claim (a screen
    /// whose key was lost claims it again with its new one). One still connected here is listed
    /// again at its next word.
    static func forget(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let screen = try ScreenRequests.screen(inPath: call.route.first!)
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [fleet = api.fleet, clock = api.clock, logger = api.logger] in
            do throws(StoreError) {
                guard try fleet.forget(screen, of: live, by: Attribution(by: requester, at: clock())) else {
                    let problem = Problem(
                        status: 404,
                        detail:
                            "carousel '\(live.name)' has no screen '\(screen)'; GET /carousels/\(live.name)/screens "
                            + "lists them")
                    return api.refused(problem, label: label, origin: nil)
                }
                logger.notice("\(label) → screen '\(screen)' of '\(live.name)' forgotten by \(requester.actor)")
                return PreparedResponse(Response(status: 204))
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
        }
    }

    /// `GET /screens`: every carousel's screens.
    static func all(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try list(of: nil, api, request, call)
    }

    /// `GET /carousels/{name}/screens`: one carousel's.
    static func ofCarousel(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try list(of: try api.carousel(call).name, api, request, call)
    }

    /// The screens of carousel `name` (nil: of every one); `?audience=`: those that declared it
    /// (docs/AUDIENCES.md).
    private static func list(
        of name: String?, _ api: BannerAPI, _ request: borrowing Request, _ call: Call
    ) throws(Problem) -> Reply {
        var entries = api.fleet.entries(of: name)
        if let audience = try QueryValues.audience(of: request) {
            entries.removeAll { $0.record.audience != audience }
        }
        return .response(ScreenRequests.list(entries, headers: api.cors.headers(for: call.origin)))
    }

    /// `GET /screens/events`: screens' state changes as they happen.
    static func events(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .stream(api.screenEvents.subscribe())
    }
}
