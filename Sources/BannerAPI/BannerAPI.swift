import Carousel
import CarouselRuntime
import Definitions
import JSON
import Logging
import Media
import Metrics
import MicroHTTP
import Store
import TimeZones

/// The HTTP API (docs/API.md). Reads are answered on the calling thread from pre-built
/// responses; commands and admin changes are checked (route, role, body) on the calling thread,
/// then run in their carousel's engine while the connection is suspended. A refused request
/// never reaches an engine or the store.
public struct BannerAPI: HTTPHandler {
    let directory: CarouselDirectory<HTTPViews>
    /// The screens of every carousel (docs/SCREENS.md, "The fleet").
    let fleet: Fleet<HTTPViews>
    /// `GET /screens/events`' subscribers.
    let screenEvents: ScreenEvents
    /// The carousels' read views and event streams.
    let views: HTTPViews
    let web: StaticAssets
    let access: AccessPolicy
    /// Whether webhooks may lead to loopback and private addresses (docs/WEBHOOKS.md).
    let webhookAllowPrivate: Bool
    let cors: CORSPolicy
    let logger: Logger
    /// The clock the carousels run on, which `GET /time` reads.
    let clock: @Sendable () -> Timestamp
    /// Nil when ready for traffic (`GET /readyz`); otherwise why not.
    let notReady: @Sendable () -> String?
    /// Event-stream subscribers connected now, by who holds their connection (`GET /metrics`).
    let subscribers: @Sendable () -> (ownSocket: Int, libmicrohttpd: Int)
    let requests = RequestMetrics(routeTemplates: Routes.allTemplates)
    /// Everything else `GET /metrics` reports.
    let metrics: ServiceMetrics
    /// Uploaded images (docs/MEDIA.md), and their files as responses.
    let media: MediaLibrary
    let mediaFiles = MediaFiles()
    /// Named tokens (docs/TOKENS.md).
    let tokens: NamedTokens
    /// Changes to make later (docs/SCHEDULED.md).
    let scheduled: ScheduledChanges<HTTPViews>
    /// No validator to revalidate with, so nothing may keep a copy: a cached "ok" would hide a dead process.
    private let health = PreparedResponse(
        Response(
            status: 200,
            headers: [ReadViews.jsonContentType, HTTPHeader("Cache-Control", "no-store")],
            body: Array("{\"status\":\"ok\"}\n".utf8)))

    /// `GET /readyz` while ready; the same caching rule as the health check's.
    private let ready = PreparedResponse(
        Response(
            status: 200,
            headers: [ReadViews.jsonContentType, HTTPHeader("Cache-Control", "no-store")],
            body: Array("{\"status\":\"ready\"}\n".utf8)))

    init(
        directory: CarouselDirectory<HTTPViews>, fleet: Fleet<HTTPViews>, screenEvents: ScreenEvents, views: HTTPViews,
        media: MediaLibrary, tokens: NamedTokens, scheduled: ScheduledChanges<HTTPViews>, web: StaticAssets,
        access: AccessPolicy,
        cors: CORSPolicy, logger: Logger,
        webhookAllowPrivate: Bool = false,
        clock: @escaping @Sendable () -> Timestamp, notReady: @escaping @Sendable () -> String? = { nil },
        subscribers: @escaping @Sendable () -> (ownSocket: Int, libmicrohttpd: Int) = { (0, 0) },
        metrics: ServiceMetrics = ServiceMetrics()
    ) {
        self.metrics = metrics
        self.webhookAllowPrivate = webhookAllowPrivate
        self.media = media
        self.tokens = tokens
        self.scheduled = scheduled
        self.clock = clock
        self.notReady = notReady
        self.subscribers = subscribers
        self.directory = directory
        self.fleet = fleet
        self.screenEvents = screenEvents
        self.views = views
        self.web = web
        self.access = access
        self.cors = cors
        self.logger = logger
    }

    /// `GET …/events` (docs/API.md): held outside libmicrohttpd when it is a connection's first request.
    public func mayStream(_ path: Substring) -> Bool {
        path.hasSuffix("/events")
    }

    /// Every GET and HEAD but a subscription (a stream) and stats (read from the store later);
    /// the POSTs screens send most, receipts and views, which are checked and taken at once.
    public func answersAtOnce(method: String, path: String) -> Bool {
        switch method {
        case "GET", "HEAD": !path.hasSuffix("/events") && !path.hasSuffix("/stats")
        case "POST": path.hasSuffix("/receipts") || path.hasSuffix("/views")
        default: false
        }
    }

    /// Uploads to the media library may be as large as `mediaMaxBytes`; every other body is small.
    public func bodyLimit(method: String, path: String) -> Int? {
        method == "POST" && path == "/media" ? media.settings.limits.maxBytes : nil
    }

    /// Answers, and counts the answer (`RequestMetrics`) by the route template it matched.
    public func respond(to request: borrowing Request) -> Reply {
        #if NO_REQUEST_METRICS
            // `make bench`'s second build (docs/PERFORMANCE.md): reads without counting, to measure
            // what counting costs them.
            var template: RouteTemplate?
            return answer(request, template: &template)
        #else
            return answerCounted(request)
        #endif
    }

    private func answerCounted(_ request: borrowing Request) -> Reply {
        let started = monotonicNanoseconds()
        var template: RouteTemplate?
        let reply = answer(request, template: &template)
        guard request.sends(reply) else { return reply }  // counted where it is asked again and sent
        let route = template?.index
        let method = request.method
        let status: Int
        switch reply {
        case .prepared(let prepared): status = prepared.status
        case .response(let response): status = response.status
        case .stream(let stream): status = stream.status
        case .deferred(let work):
            return .deferred { [requests] in
                let answer = await work()
                requests.countDeferred(
                    route: route, method: method, status: answer.status, nanoseconds: monotonicNanoseconds() &- started)
                return answer
            }
        }
        requests.count(route: route, method: method, status: status, nanoseconds: monotonicNanoseconds() &- started)
        return reply
    }

    /// The answer; a write the audit log keeps carries its request's id (`RequestIDs`), refused or not.
    private func answer(_ request: borrowing Request, template: inout RouteTemplate?) -> Reply {
        var requestID: String?
        let reply = answer(request, template: &template, requestID: &requestID)
        guard let requestID else { return reply }
        let header = HTTPHeader(RequestIDs.header, requestID)
        switch reply {
        case .response(var response):
            response.headers.append(header)
            return .response(response)
        case .deferred(let work):
            return .deferred {
                var response = await work().response
                response.headers.append(header)
                return PreparedResponse(response)
            }
        case .prepared, .stream:
            return reply  // no write answers so
        }
    }

    private func answer(_ request: borrowing Request, template: inout RouteTemplate?, requestID: inout String?)
        -> Reply
    {
        // Only looked up when CORS is on: reads stay one header lookup (If-None-Match) otherwise.
        var origin = cors.isEnabled ? cors.allowedOrigin(for: request.header("Origin")) : nil
        do throws(Problem) {
            let route = try Routes.resolve(method: request.method, path: request.path, preflight: cors.isEnabled)
            template = route.template
            if route.action.isAudited { requestID = RequestIDs.id(of: request) }
            if route.action.needsAdmin { origin = nil }  // CORS never grants admin routes
            switch route.action {
            case .read(let resource):
                let (screen, audience) = try ScreenRequests.screenAndAudience(of: request)
                if let screen { try hear(screen, of: audience, on: route, request: request) }
                guard
                    let response = views.readResponse(
                        carousel: route.carousel, audience: audience, resource,
                        origin: origin, ifNoneMatch: request.header("If-None-Match"),
                        find: { directory.carousel(named: $0)?.outlet })
                else { throw Problem.notFound(carousel: route.carousel) }
                return .prepared(response)
            case .health:
                return .prepared(health)
            case .readiness:
                if let reason = notReady() {
                    throw Problem(
                        status: 503, detail: "not ready: \(reason)",
                        headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")])
                }
                return .prepared(ready)
            case .time:
                return .response(ServiceTime.response(at: clock(), headers: cors.headers(for: origin)))
            case .metrics:
                return .response(
                    MetricsExposition.response(
                        requests: requests, service: metrics, fleet: fleet, subscribers: subscribers()))
            case .web(let path):
                if path == "/" && route.carousel != CarouselDefinition.defaultName { _ = try carousel(route) }
                return .prepared(web.response(path, ifNoneMatch: request.header("If-None-Match")))
            case .events:
                let live = try carousel(route)
                let (screen, audience) = try ScreenRequests.screenAndAudience(of: request)
                guard let screen else {
                    return .stream(live.subscribe(audience, headers: cors.headers(for: origin)))
                }
                let held: ScreenRecord.Key
                do throws(ScreenRefusal) {
                    held = try fleet.hold(
                        screen, on: live, userAgent: request.header("User-Agent"), audience: audience)
                } catch {
                    throw ScreenRequests.problem(error)
                }
                let stream = live.subscribe(audience, headers: cors.headers(for: origin))
                stream.onClose { [fleet] in fleet.release(held) }
                return .stream(stream)
            case .screenEvents:
                try access.authorizeAdmin(request, carousel: nil)
                return .stream(screenEvents.subscribe())
            case .allScreens, .carouselScreens:
                try access.authorizeAdmin(request, carousel: route.action == .allScreens ? nil : route.carousel)
                let name = route.action == .allScreens ? nil : try carousel(route).name
                // `?audience=`: the screens that declared it (docs/AUDIENCES.md).
                var entries = fleet.entries(of: name)
                if let audience = try QueryValues.audience(of: request) {
                    entries.removeAll { $0.record.audience != audience }
                }
                return .response(ScreenRequests.list(entries, headers: cors.headers(for: origin)))
            case .receipts(let screenText):
                let live = try carousel(route)
                let screen = try ScreenRequests.screen(inPath: screenText)
                let receipts = try ScreenRequests.receipts(of: request)
                let audience = try QueryValues.audience(of: request)
                do throws(ScreenRefusal) {
                    try fleet.report(
                        receipts, from: screen, on: live, userAgent: request.header("User-Agent"), audience: audience)
                } catch {
                    throw ScreenRequests.problem(error)
                }
                return .response(Response(status: 204, headers: cors.headers(for: origin)))
            case .preflight(let allow, let crossOrigin):
                return .response(preflight(allow: allow, crossOrigin: crossOrigin, origin: origin))
            case .listCarousels:
                return .response(try list(request, origin: origin))
            case .definition:
                let live = try carousel(route)
                let stored = live.stored
                return .response(
                    DefinitionViews.definition(
                        stored, tag: live.definitionTag(revision: stored.revision), status: 200,
                        ifNoneMatch: request.header("If-None-Match"), headers: cors.headers(for: origin)))
            case .banner(let id):
                let live = try carousel(route)
                let stored = live.stored
                guard let banner = stored.definition.banners.first(where: { $0.id == id }) else {
                    throw Problem(status: 404, detail: "carousel '\(live.name)' has no banner '\(id)'")
                }
                return .response(
                    DefinitionViews.banner(
                        banner, tag: live.definitionTag(revision: stored.revision), status: 200,
                        ifNoneMatch: request.header("If-None-Match"), headers: cors.headers(for: origin)))
            case .command(let command):
                let actor =
                    command.needsAdmin
                    ? try access.authorizeAdmin(request, carousel: route.carousel)
                    : try access.authorizeControl(request, carousel: route.carousel)
                let requester = Requester(actor: actor, requestID: requestID)
                let live = try carousel(route)
                let parsed = try CommandBody.command(for: command, request: request, state: live.engine.snapshot)
                let audience = try QueryValues.audience(of: request)
                let label = Self.label(request, requestID)
                return .deferred { [origin] in
                    await perform(parsed, on: live, by: requester, label: label, audience: audience, origin: origin)
                }
            case .timeline:
                let live = try carousel(route)
                let span = try TimelineView.span(request.queryParameter("hours"))
                let limit = try TimelineView.limit(request.queryParameter("limit"), spanGiven: span != nil)
                let redefinitions = ScheduledRequests.redefinitions(scheduled.known(of: live.key.serial), of: live)
                let (entries, until) = live.engine.plan(
                    limit: limit, span: span, redefinitions: redefinitions,
                    audience: try QueryValues.audience(of: request))
                return .response(
                    TimelineView.response(
                        of: entries, until: span.map { _ in until }, listed: live.stored.definition.banners,
                        headers: cors.headers(for: origin)))
            case .preview:
                let live = try carousel(route)
                let audience = try QueryValues.audience(of: request)
                let at = try TimelineView.instant(request.queryParameter("at"), now: clock())
                let redefinitions = ScheduledRequests.redefinitions(scheduled.known(of: live.key.serial), of: live)
                let state = live.engine.projected(to: at, redefinitions: redefinitions).state(for: audience)
                return .response(TimelineView.preview(state, headers: cors.headers(for: origin)))
            case .views:
                let live = try carousel(route)
                let state = live.engine.snapshot
                let audience = state.audienceWithOwnState(try QueryValues.audience(of: request))
                let views = try EngagementRequests.views(of: request, state: state, now: clock())
                let headers = cors.headers(for: origin)
                guard views.contains(where: { $0.id != nil }) else {
                    directory.plays.countViews(views, carousel: live.key.serial, audience: audience)
                    return .response(Response(status: 204, headers: headers))
                }
                // Views with ids are acknowledged once stored: a screen keeps them until then, and
                // sending them again counts nothing twice (docs/STATS.md).
                return .deferred { [directory, serial = live.key.serial, logger] in
                    do throws(StoreError) {
                        try directory.plays.storeViews(views, carousel: serial, audience: audience)
                        return PreparedResponse(Response(status: 204, headers: headers))
                    } catch {
                        logger.warning("views not stored yet: \(error); the screen is asked to send them again")
                        let problem = Problem(
                            status: 503,
                            detail: "the views are not stored yet (\(error)); send them again later: with their ids "
                                + "they count once",
                            headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")] + headers)
                        return PreparedResponse(problem.response)
                    }
                }
            case .click(let id):
                let live = try carousel(route)
                let state = live.engine.snapshot
                let audience = state.audienceWithOwnState(try QueryValues.audience(of: request))
                let (banner, response) = try EngagementRequests.click(banner: id, state: state, carousel: live.name)
                directory.plays.countClick(
                    banner: banner.id, carousel: live.key.serial, audience: audience, at: clock())
                return .response(response)
            case .stats:
                _ = try access.authorizeStats(request, carousel: route.carousel)
                let live = try carousel(route)
                let definition = live.stored.definition
                let query = try EngagementRequests.statsQuery(of: request, zone: definition.timeZone, now: clock())
                // An audience's own stats: its screens' plays, views and clicks; its banners and
                // its rotation's shares (docs/AUDIENCES.md).
                let audience = try QueryValues.audience(of: request)
                let state = live.engine.snapshot.state(for: audience)
                let banners = definition.banners.filter { $0.isFor(state.audience) }.map(\.id)
                let shares = Dictionary(
                    uniqueKeysWithValues: zip(state.banners, state.airtimeShares).compactMap { banner, share in
                        share.map { (banner.id, $0) }
                    })
                let headers = cors.headers(for: origin)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        let records = try directory.plays.records(
                            of: live.key.serial, audience: audience, from: query.from, to: query.to)
                        let report = StatsReport(
                            records: records, from: query.from, to: query.to, bucket: query.bucket,
                            zone: definition.timeZone, banners: banners, shares: shares)
                        let (type, body) =
                            query.csv
                            ? ("text/csv; charset=utf-8", report.csv())
                            : (ReadViews.jsonContentType.value, report.json(carousel: live.name, audience: audience))
                        return PreparedResponse(
                            Response(
                                status: 200,
                                headers: [HTTPHeader("Content-Type", type), HTTPHeader("Cache-Control", "no-store")]
                                    + headers, body: body))
                    } catch {
                        var problem = Problem.store(error)
                        problem.headers += headers
                        return PreparedResponse(problem.response)
                    }
                }
            case .createCarousel:
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let change = try AdminRequest.parse(nil, carousel: "", request: request)
                let label = Self.label(request, requestID)
                return .deferred { [origin] in
                    await administer(change, on: nil, by: requester, ifMatch: nil, label: label, origin: origin)
                }
            case .mediaFile(let id, let file):
                let asked = MediaFileRequest(id: id, file: file, request: request)
                if let answer = mediaFiles.answer(asked) { return .prepared(answer) }
                return .deferred { [media, mediaFiles] in
                    do throws(StoreError) {
                        let type = file == .original ? media.index.record(id)?.type : "image/webp"
                        guard let type, let bytes = try media.bytes(of: id, file) else {
                            return PreparedResponse(
                                Problem(
                                    status: 404, detail: "no media file \(asked.path); GET /media lists the library"
                                )
                                .response)
                        }
                        return mediaFiles.keep(bytes, type: type, for: asked)
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .listMedia:
                try access.authorizeAdmin(request, carousel: nil)
                return .deferred { [media] in
                    do throws(StoreError) {
                        return MediaRequests.list(try media.records(), uses: media.uses())
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .uploadMedia:
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let (bytes, declaredType) = try MediaRequests.upload(of: request)
                // What costs nothing is checked here, before the connection waits for a decode.
                let limits = media.settings.limits
                let checked = bytes.withUnsafeBytes { raw in
                    Result { () throws(MediaRefusal) in
                        try MediaProcessing.check(raw, declaredType: declaredType, limits: limits)
                    }
                }
                if case .failure(let refusal) = checked { throw MediaRequests.problem(refusal) }
                let label = Self.label(request, requestID)
                return .deferred { [media, logger] in
                    do throws(MediaLibrary.UploadFailure) {
                        switch try await media.upload(bytes, declaredType: declaredType, by: requester) {
                        case .created(let record):
                            logger.notice(
                                "\(label) → media \(record.id) (\(record.type), \(record.width) × \(record.height), "
                                    + "\(record.variants.count) variants)")
                            return ReadViews.uncached(
                                MediaRequests.json(record, usedBy: []), status: 201,
                                headers: [HTTPHeader("Location", "/media/\(record.id)")])
                        case .existing(let record):
                            return ReadViews.uncached(
                                MediaRequests.json(record, usedBy: media.uses()[record.id] ?? []), status: 200,
                                headers: [HTTPHeader("Location", "/media/\(record.id)")])
                        }
                    } catch {
                        let problem: Problem =
                            switch error {
                            case .refused(let refusal): MediaRequests.problem(refusal)
                            case .busy(let pending):
                                Problem(
                                    status: 503,
                                    detail:
                                        "\(pending) uploads are being decoded or waiting; send this one again later",
                                    headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")])
                            case .store(let failure): Problem.store(failure)
                            }
                        return refused(problem, label: label, origin: nil)
                    }
                }
            case .deleteMedia(let id):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let label = Self.label(request, requestID)
                return .deferred { [media, mediaFiles, logger] in
                    do throws(MediaLibrary.DeletionFailure) {
                        try media.delete(id, by: requester)
                        mediaFiles.forget(id)
                        logger.notice("\(label) → media \(id) deleted")
                        return PreparedResponse(Response(status: 204))
                    } catch {
                        let problem: Problem =
                            switch error {
                            case .notFound: Problem(status: 404, detail: "no media \(id); GET /media lists the library")
                            case .inUse(let uses):
                                Problem(
                                    status: 409,
                                    detail: "media \(id) is shown by "
                                        + uses.map { "banner '\($0.banner)' of carousel '\($0.carousel)'" }.joined(
                                            separator: ", ") + "; give those banners another image first")
                            case .store(let failure): Problem.store(failure)
                            }
                        return refused(problem, label: label, origin: nil)
                    }
                }
            case .admin(let admin):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: route.carousel), requestID: requestID)
                let live = try carousel(route)
                let change = try AdminRequest.parse(admin, carousel: live.name, request: request)
                let label = Self.label(request, requestID)
                let ifMatch = request.header("If-Match")
                let now = clock()
                if let at = try ScheduledRequests.at(of: request, route: admin, now: now) {
                    // Tried on the definition as it is now, so that an invalid change is refused now rather
                    // than dropped at its time (the definition may still change before then).
                    _ = try change.revise(live.stored.definition)
                    let pending = PendingChange(
                        carousel: live.key.serial, at: at, method: request.method,
                        path: ScheduledRequests.path(of: request), body: String(decoding: request.body, as: UTF8.self),
                        ifMatch: ifMatch, requester: requester, createdAt: now)
                    return .deferred { [scheduled, logger, origin] in
                        do throws(StoreError) {
                            let stored = try await scheduled.schedule(pending)
                            logger.notice("\(label) → change \(stored.id) scheduled for \(at.rfc3339)")
                            return ReadViews.uncached(
                                ScheduledRequests.json(stored, carousel: live.name), status: 202,
                                headers: [HTTPHeader("Location", "/carousels/\(live.name)/pending/\(stored.id)")]
                                    + cors.headers(for: origin))
                        } catch {
                            return refused(.store(error), label: label, origin: origin)
                        }
                    }
                }
                return .deferred { [origin] in
                    await administer(change, on: live, by: requester, ifMatch: ifMatch, label: label, origin: origin)
                }
            case .listTokens:
                try access.authorizeAdmin(request, carousel: nil)
                return .deferred { [tokens, clock] in
                    do throws(StoreError) {
                        return TokenRequests.list(try tokens.all(), now: clock())
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .createToken:
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let asked = try TokenRequests.newToken(of: request, now: clock()) {
                    directory.carousel(named: $0) != nil
                }
                let label = Self.label(request, requestID)
                return .deferred { [tokens, clock, logger] in
                    let now = clock()
                    do throws(StoreError) {
                        guard
                            let (record, secret) = try tokens.create(
                                name: asked.name, role: asked.role, carousels: asked.carousels,
                                expiresAt: asked.expiresAt, by: requester, at: now)
                        else {
                            let problem = Problem(
                                status: 409,
                                detail: "a token named '\(asked.name)' exists already; choose another name, or "
                                    + "DELETE /tokens/\(asked.name) first")
                            return refused(problem, label: label, origin: nil)
                        }
                        let scope = asked.carousels.map { " for \($0.joined(separator: ", "))" } ?? ""
                        logger.notice(
                            "\(label) → token '\(asked.name)' created by \(requester.actor): \(asked.role.rawValue)\(scope)"
                        )
                        return ReadViews.uncached(TokenRequests.json(record, now: now, secret: secret), status: 201)
                    } catch {
                        return refused(.store(error), label: label, origin: nil)
                    }
                }
            case .revokeToken(let name):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let label = Self.label(request, requestID)
                return .deferred { [tokens, clock, logger] in
                    do throws(StoreError) {
                        guard try tokens.revoke(named: name, by: requester, at: clock()) else {
                            let problem = Problem(
                                status: 404, detail: "no token named '\(name)'; GET /tokens lists them")
                            return refused(problem, label: label, origin: nil)
                        }
                        logger.notice("\(label) → token '\(name)' revoked by \(requester.actor)")
                        return PreparedResponse(Response(status: 204))
                    } catch {
                        return refused(.store(error), label: label, origin: nil)
                    }
                }
            case .listWebhooks:
                try access.authorizeAdmin(request, carousel: nil)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        return WebhookRequests.list(try directory.webhooks())
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .webhook(let text):
                try access.authorizeAdmin(request, carousel: nil)
                let id = try WebhookRequests.id(text)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        guard let webhook = try directory.webhooks().first(where: { $0.id == id }) else {
                            return PreparedResponse(WebhookRequests.notFound(text).response)
                        }
                        return ReadViews.uncached(WebhookRequests.json(webhook))
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .deliveries(let text):
                try access.authorizeAdmin(request, carousel: nil)
                let id = try WebhookRequests.id(text)
                let limit = try WebhookRequests.deliveriesLimit(of: request)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        guard try directory.webhooks().contains(where: { $0.id == id }) else {
                            return PreparedResponse(WebhookRequests.notFound(text).response)
                        }
                        return WebhookRequests.deliveries(try directory.deliveries(of: id, limit: limit))
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .createWebhook:
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let asked = try WebhookRequests.newWebhook(of: request)
                let label = Self.label(request, requestID)
                // Resolving the host blocks: off the request thread, as the store's work is.
                return .deferred { [directory, clock, logger, webhookAllowPrivate] in
                    do throws(Problem) {
                        try WebhookRequests.resolve(asked, allowPrivate: webhookAllowPrivate)
                        let now = clock()
                        let record = WebhookRecord(
                            url: asked.url.description, events: asked.events, secret: asked.secret, createdAt: now,
                            createdBy: requester.actor)
                        // The store counts them in the write's transaction: creations racing each
                        // other never pass the limit.
                        let stored = try Problem.storeResult { () throws(StoreError) in
                            try directory.saveWebhook(
                                record, by: Attribution(by: requester, at: now),
                                keepingAtMost: WebhookRequests.maxWebhooks)
                        }
                        guard let stored else {
                            throw Problem(
                                status: 409,
                                detail: "there are \(WebhookRequests.maxWebhooks) webhooks, the most kept; "
                                    + "DELETE /webhooks/{id} one first")
                        }
                        logger.notice(
                            "\(label) → webhook \(stored.id) to \(stored.url) created by \(requester.actor): "
                                + stored.events.map(\.rawValue).joined(separator: ", "))
                        return ReadViews.uncached(
                            WebhookRequests.json(stored), status: 201,
                            headers: [HTTPHeader("Location", "/webhooks/\(stored.id)")])
                    } catch {
                        return refused(error, label: label, origin: nil)
                    }
                }
            case .deleteWebhook(let text):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: nil), requestID: requestID)
                let id = try WebhookRequests.id(text)
                let label = Self.label(request, requestID)
                return .deferred { [directory, clock, logger] in
                    do throws(StoreError) {
                        guard try directory.deleteWebhook(id, by: Attribution(by: requester, at: clock())) else {
                            return refused(WebhookRequests.notFound(text), label: label, origin: nil)
                        }
                        logger.notice("\(label) → webhook \(id) deleted by \(requester.actor)")
                        return PreparedResponse(Response(status: 204))
                    } catch {
                        return refused(.store(error), label: label, origin: nil)
                    }
                }
            case .auditLog:
                try access.authorizeAdmin(request, carousel: nil)
                let (query, csv) = try AuditViews.query(of: request)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        return AuditViews.response(try directory.auditLog(query), of: query, csv: csv)
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .pendingChanges:
                try access.authorizeAdmin(request, carousel: route.carousel)
                let live = try carousel(route)
                return .deferred { [scheduled] in
                    do throws(StoreError) {
                        return ScheduledRequests.list(try scheduled.pending(of: live.key.serial), carousel: live.name)
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .cancelPending(let text):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: route.carousel), requestID: requestID)
                let live = try carousel(route)
                let id = try ScheduledRequests.id(text, of: live.name)
                let label = Self.label(request, requestID)
                return .deferred { [scheduled, clock, logger] in
                    do throws(StoreError) {
                        let attribution = Attribution(by: requester, at: clock())
                        guard try await scheduled.cancel(id, of: live.key.serial, by: attribution) else {
                            return refused(ScheduledRequests.notPending(text, of: live.name), label: label, origin: nil)
                        }
                        logger.notice("\(label) → change \(id) cancelled by \(requester.actor)")
                        return PreparedResponse(Response(status: 204))
                    } catch {
                        return refused(.store(error), label: label, origin: nil)
                    }
                }
            case .revisions:
                try access.authorizeAdmin(request, carousel: route.carousel)
                let live = try carousel(route)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        return RevisionViews.list(try directory.revisions(of: live), of: live.name)
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .revision(let text):
                try access.authorizeAdmin(request, carousel: route.carousel)
                let live = try carousel(route)
                let number = try RevisionViews.number(text, of: live.name)
                return .deferred { [directory] in
                    do throws(StoreError) {
                        guard let kept = try directory.revision(number, of: live) else {
                            return PreparedResponse(RevisionViews.notKept(number, of: live.name).response)
                        }
                        return RevisionViews.document(kept)
                    } catch {
                        return PreparedResponse(Problem.store(error).response)
                    }
                }
            case .restoreRevision(let text):
                let requester = Requester(
                    actor: try access.authorizeAdmin(request, carousel: route.carousel), requestID: requestID)
                let live = try carousel(route)
                let number = try RevisionViews.number(text, of: live.name)
                let label = Self.label(request, requestID)
                let ifMatch = request.header("If-Match")
                return .deferred { [directory] in
                    let kept: Revision?
                    do throws(StoreError) {
                        kept = try directory.revision(number, of: live)
                    } catch {
                        return refused(.store(error), label: label, origin: nil)
                    }
                    guard let kept else {
                        return refused(RevisionViews.notKept(number, of: live.name), label: label, origin: nil)
                    }
                    return await administer(
                        .replace(kept.definition), on: live, by: requester, restoring: number, ifMatch: ifMatch,
                        label: label, origin: nil)
                }
            }
        } catch {
            template = template ?? Routes.template(of: request.path)
            var problem = error
            problem.headers += cors.headers(for: origin)
            let reply = Reply.response(problem.response)
            if request.sends(reply) {  // else logged where it is asked again and sent
                let level: Logger.Level = request.method == "GET" || request.method == "HEAD" ? .debug : .notice
                logger.log(level, "\(Self.label(request, requestID)) refused: \(error.status) \(error.detail)")
            }
            return reply
        }
    }

    /// How log lines name a request: `POST /banner/next`, and for a write the audit log keeps,
    /// its id (`POST /banner/next [3ca95014-…]`), to match the line with the entry.
    private static func label(_ request: borrowing Request, _ requestID: String?) -> String {
        "\(request.method) \(request.path)" + (requestID.map { " [\($0)]" } ?? "")
    }

    /// A poll from `screen` of `audience`: heard, or 429 when it is new and its carousel has all the
    /// screens it may.
    private func hear(_ screen: ScreenID, of audience: String?, on route: Route, request: borrowing Request)
        throws(Problem)
    {
        let live = try carousel(route)
        do throws(ScreenRefusal) {
            try fleet.hear(screen, on: live, userAgent: request.header("User-Agent"), audience: audience)
        } catch {
            throw ScreenRequests.problem(error)
        }
    }

    /// The carousel a route is about, or the 404 naming it.
    private func carousel(_ route: Route) throws(Problem) -> ServedCarousel {
        guard let live = directory.carousel(named: route.carousel) else {
            throw Problem.notFound(carousel: route.carousel)
        }
        return live
    }

    /// The most carousels one page of `GET /carousels` lists.
    static let maximumListLimit: Int64 = 1000

    /// `GET /carousels`: each carousel's name, banner count and state version, by name; a page of
    /// `limit` after the name `after` when asked (docs/API.md), and `next`, the `after` of the
    /// following page (null on the last).
    private func list(_ request: borrowing Request, origin: String?) throws(Problem) -> Response {
        let limit = try QueryValues.number(
            request.queryParameter("limit"), name: "limit", in: 1...Self.maximumListLimit)
        let after = request.queryParameter("after")
        var listed = directory.all
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
        return Response(
            status: 200, headers: ReadViews.jsonHeaders + cors.headers(for: origin),
            body: object.bytes + [UInt8(ascii: "\n")])
    }

    /// 204 with the path's methods; the CORS grant only for an allowed origin, and only of the
    /// methods other origins may use (`crossOrigin`: none of the admin role's).
    private func preflight(allow: String, crossOrigin: String?, origin: String?) -> Response {
        let granted = crossOrigin == nil ? nil : origin
        var headers = [HTTPHeader("Allow", allow)] + cors.headers(for: granted)
        if granted != nil, let crossOrigin {
            headers += [
                HTTPHeader("Access-Control-Allow-Methods", crossOrigin),
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
            let setting = path == "/media" ? "mediaMaxBytes" : "maxBody"
            return Problem(status: 413, detail: "request body larger than \(limit) bytes (\(setting))").response
        case .shuttingDown:
            return Problem(status: 503, detail: "the service is shutting down; retry on another instance or later")
                .response
        case .malformed(let reason, let method, let path):
            logger.notice("\(method) \(path) refused: 400 \(reason)")
            return Problem.badRequest(reason).response
        case .unknownTransferCoding(let coding, let method, let path):
            let detail = "Transfer-Encoding '\(coding)' is not supported; send the body with Content-Length or chunked"
            logger.notice("\(method) \(path) refused: 501 \(detail)")
            return Problem(status: 501, detail: detail).response
        }
    }

    /// Runs a command; answers the state it left, as the screens of the request's `audience` see it.
    private func perform(
        _ command: CarouselCommand, on live: ServedCarousel, by requester: Requester, label: String,
        audience: String?, origin: String?
    ) async -> PreparedResponse {
        do {
            let state = try await live.perform(command, by: requester)
            logger.info("\(label) → \(Self.summary(of: state))")
            return live.stateResponse(state, audience: audience, origin: origin)
        } catch {
            let problem = Problem.change(error, of: live, ifMatch: nil, refusal: Problem.command)
            return refused(problem, label: label, origin: origin)
        }
    }

    /// Runs an admin change by `requester`: a new carousel (`live` nil), or a change of `live` (a
    /// restore of revision `restoring`, when it is one).
    private func administer(
        _ change: AdminRequest, on live: ServedCarousel?, by requester: Requester, restoring: UInt64? = nil,
        ifMatch: String?, label: String, origin: String?
    ) async -> PreparedResponse {
        do throws(Problem) {
            return try await administered(
                change, on: live, by: requester, restoring: restoring, ifMatch: ifMatch, label: label, origin: origin)
        } catch {
            return refused(error, label: label, origin: origin)
        }
    }

    private func administered(
        _ change: AdminRequest, on live: ServedCarousel?, by requester: Requester, restoring: UInt64?,
        ifMatch: String?, label: String, origin: String?
    ) async throws(Problem) -> PreparedResponse {
        let headers = cors.headers(for: origin)
        // Before any change runs: the store may be read (docs/MEDIA.md).
        try MediaRequests.rememberImages(named: change, in: media)
        guard let live else {
            guard case .create(let definition) = change else { preconditionFailure("only create has no carousel") }
            try MediaRequests.checkLibraryImages(of: definition, besides: nil, in: media.index)
            let created: ServedCarousel
            do throws(StoreError) { created = try directory.create(definition, by: requester) } catch {
                throw .store(error)
            }
            let stored = created.stored
            let count = definition.banners.count
            logger.notice("\(label) → created carousel '\(created.name)' of \(count) banner\(count == 1 ? "" : "s")")
            return PreparedResponse(
                DefinitionViews.definition(
                    stored, tag: created.definitionTag(revision: stored.revision), status: 201,
                    headers: headers + [HTTPHeader("Location", "/carousels/\(created.name)")]))
        }
        let condition = live.condition(ifMatch: ifMatch)
        if case .delete = change {
            do throws(ChangeError<Never>) {
                try await directory.delete(live, if: condition, by: requester)
            } catch {
                throw .change(error, of: live, ifMatch: ifMatch)
            }
            logger.notice("\(label) → deleted carousel '\(live.name)'")
            return PreparedResponse(Response(status: 204, headers: headers))
        }
        let revised: StoredCarousel
        do throws(ChangeError<Problem>) {
            let (action, target) = restoring.map { (AuditAction.restoreRevision, String($0)) } ?? change.audit
            revised = try await live.edit(
                if: condition, by: requester, as: action, target: target, restoring: restoring
            ) {
                [index = media.index] current throws(Problem) in
                let revised = try change.revise(current)
                try MediaRequests.checkLibraryImages(of: revised, besides: current, in: index)
                return revised
            }
        } catch {
            throw .change(error, of: live, ifMatch: ifMatch) { $0 }
        }
        let tag = live.definitionTag(revision: revised.revision)
        let restored = restoring.map { " (revision \($0) restored)" } ?? ""
        logger.notice("\(label) → carousel '\(live.name)' at revision \(revised.revision)\(restored)")
        switch change {
        case .addBanner(let banner, _):
            return PreparedResponse(
                DefinitionViews.banner(
                    banner, tag: tag, status: 201,
                    headers: headers + [HTTPHeader("Location", "/carousels/\(live.name)/banners/\(banner.id)")]))
        case .replaceBanner(let id, _), .patchBanner(let id, _):
            let banner = revised.definition.banners.first { $0.id == id }!
            return PreparedResponse(DefinitionViews.banner(banner, tag: tag, status: 200, headers: headers))
        case .deleteBanner:
            return PreparedResponse(Response(status: 204, headers: headers + [HTTPHeader("ETag", tag)]))
        default:
            return PreparedResponse(DefinitionViews.definition(revised, tag: tag, status: 200, headers: headers))
        }
    }

    private func refused(_ error: Problem, label: String, origin: String?) -> PreparedResponse {
        var problem = error
        if problem.status >= 500 {
            logger.error("\(label) failed: \(problem.status) \(problem.detail)")
        } else {
            logger.notice("\(label) refused: \(problem.status) \(problem.detail)")
        }
        problem.headers += cors.headers(for: origin)
        return PreparedResponse(problem.response)
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

/// The admin API's documents: a definition (with its revision) or a banner, with the
/// definition's ETag.
enum DefinitionViews {
    static func definition(
        _ stored: StoredCarousel, tag: String, status: Int, ifNoneMatch: String? = nil, headers: [HTTPHeader]
    ) -> Response {
        respond(
            stored.definition.json(revision: stored.revision), tag: tag, status: status, ifNoneMatch: ifNoneMatch,
            headers: headers)
    }

    static func banner(_ banner: Banner, tag: String, status: Int, ifNoneMatch: String? = nil, headers: [HTTPHeader])
        -> Response
    {
        respond(BannerDecoding.json(banner), tag: tag, status: status, ifNoneMatch: ifNoneMatch, headers: headers)
    }

    private static func respond(
        _ object: JSONObject, tag: String, status: Int, ifNoneMatch: String?, headers: [HTTPHeader]
    ) -> Response {
        let representation = Representation(
            etag: tag, body: object.bytes + [UInt8(ascii: "\n")], headers: ReadViews.jsonHeaders + headers)
        if status == 200 { return representation.response(ifNoneMatch: ifNoneMatch).response }
        var response = representation.ok.response
        response.status = status
        return response
    }
}
