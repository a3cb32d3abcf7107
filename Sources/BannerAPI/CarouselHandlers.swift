import Carousel
import CarouselRuntime
import Definitions
import JSON
import MicroHTTP
import Store

/// A carousel as screens and pages read it (docs/API.md): its state, banners and index from the
/// pre-built responses, its event stream, its definition and banners as operators wrote them, the
/// list of carousels, the timeline and the preview. Everyone may read them.
enum CarouselHandlers {
    static func state(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try read(.state, api, request, call)
    }

    static func banners(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try read(.banners, api, request, call)
    }

    static func index(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try read(.index, api, request, call)
    }

    /// A pre-built response from the calling thread's copies (docs/ARCHITECTURE.md, "The read
    /// path"); a screen that names itself is heard from first.
    private static func read(
        _ resource: PreparedReads.Resource, _ api: BannerAPI, _ request: borrowing Request, _ call: Call
    ) throws(Problem) -> Reply {
        let name = call.route.carousel!
        let (screen, audience, key) = try ScreenRequests.screenAudienceAndKey(of: request)
        if let screen { try ScreenHandlers.hear(screen, of: audience, with: key, api, request, call) }
        guard
            let response = api.outlets.readResponse(
                carousel: name, audience: audience, resource, origin: call.origin,
                ifNoneMatch: request.header("If-None-Match"), find: { api.directory.carousel(named: $0)?.outlet })
        else { throw Problem.notFound(carousel: name) }
        return .prepared(response)
    }

    /// `GET …/events`: the state now, then every change; a screen that names itself is held in
    /// the fleet for as long as its stream is open.
    static func events(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let (screen, audience, key) = try ScreenRequests.screenAudienceAndKey(of: request)
        let headers = api.cors.headers(for: call.origin)
        // A screen past the fleet's limit (`maxScreens`), or named without the key that claimed
        // it, is served all the same, not tracked.
        guard let screen,
            let held = try? api.fleet.hold(
                screen, on: live, userAgent: request.header("User-Agent"), audience: audience, screenKey: key)
        else { return .stream(live.subscribe(audience, headers: headers)) }
        let stream = live.subscribe(audience, headers: headers)
        stream.onClose { [fleet = api.fleet] in fleet.release(held) }
        return .stream(stream)
    }

    /// `GET /carousels/{name}`: the definition with its revision, and its ETag.
    static func definition(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let stored = live.stored
        return .response(
            DefinitionDocuments.definition(
                stored, tag: live.definitionTag(revision: stored.revision), status: 200,
                ifNoneMatch: request.header("If-None-Match"), headers: api.cors.headers(for: call.origin)))
    }

    /// `GET /carousels/{name}/banners/{id}`
    static func banner(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let stored = live.stored
        let id = call.route.first!
        guard let banner = stored.definition.banners.first(where: { $0.id == id }) else {
            throw Problem(status: 404, detail: "carousel '\(live.name)' has no banner '\(id)'")
        }
        return .response(
            DefinitionDocuments.banner(
                banner, tag: live.definitionTag(revision: stored.revision), status: 200,
                ifNoneMatch: request.header("If-None-Match"), headers: api.cors.headers(for: call.origin)))
    }

    /// The most carousels one page of `GET /carousels` lists.
    static let maximumListLimit: Int64 = 1000

    /// `GET /carousels`: each carousel's name, banner count and state version, by name; a page of
    /// `limit` after the name `after` when asked (docs/API.md), and `next`, the `after` of the
    /// following page (null on the last).
    static func list(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let limit = try QueryValues.number(request.queryParameter("limit"), name: "limit", in: 1...maximumListLimit)
        let after = request.queryParameter("after")
        var listed = api.directory.all
        if let after { listed.removeAll { $0.name <= after } }
        var next: String? = nil
        if let limit, listed.count > Int(limit) {
            listed.removeSubrange(Int(limit)...)
            next = listed.last?.name
        }
        var object = JSONObject()
        object.add(
            "carousels",
            listed.map { live in
                let state = live.engine.snapshot
                var entry = JSONObject()
                entry.add("name", live.name)
                entry.add("count", state.count)
                entry.add("version", state.version)
                // What its screens show now, for a list that says it at a glance (the admin page).
                entry.add("banner", state.currentBanner?.id)
                entry.add("paused", state.isPaused)
                entry.add("takeover", state.takeover != nil)
                return entry
            })
        object.add("next", next)
        return .response(
            Response(
                status: 200, headers: PreparedReads.jsonHeaders + api.cors.headers(for: call.origin),
                body: object.line))
    }

    /// `GET …/timeline`: the changes planned from now, scheduled changes included.
    static func timeline(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let span = try TimelineDocument.span(request.queryParameter("hours"))
        let limit = try TimelineDocument.limit(request.queryParameter("limit"), spanGiven: span != nil)
        let redefinitions = ScheduledRequests.redefinitions(api.scheduled.known(of: live.key.serial), of: live)
        let (entries, until) = live.engine.plan(
            limit: limit, span: span, redefinitions: redefinitions, audience: try QueryValues.audience(of: request))
        return .response(
            TimelineDocument.response(
                of: entries, until: span.map { _ in until }, listed: live.stored.definition.banners,
                headers: api.cors.headers(for: call.origin)))
    }

    /// `GET …/preview?at=&audience=`: the state planned at an instant.
    static func preview(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let audience = try QueryValues.audience(of: request)
        let at = try TimelineDocument.instant(request.queryParameter("at"), now: api.clock())
        let redefinitions = ScheduledRequests.redefinitions(api.scheduled.known(of: live.key.serial), of: live)
        let state = live.engine.projected(to: at, redefinitions: redefinitions).state(for: audience)
        return .response(TimelineDocument.preview(state, headers: api.cors.headers(for: call.origin)))
    }

    /// `GET /carousels/{name}/`: the built-in page, for a carousel that exists.
    static func page(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        _ = try api.carousel(call)
        return .prepared(api.web.response("/", ifNoneMatch: request.header("If-None-Match")))
    }
}
