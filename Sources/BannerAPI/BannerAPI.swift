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
    let directory: CarouselDirectory<HTTPOutlets>
    /// The screens of every carousel (docs/SCREENS.md, "The fleet").
    let fleet: Fleet<HTTPOutlets>
    /// `GET /screens/events`' subscribers.
    let screenEvents: ScreenEvents
    /// The carousels' prepared reads and event streams.
    let outlets: HTTPOutlets
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
    let refusedCredentials = RefusedCredentials()
    /// Everything else `GET /metrics` reports.
    let metrics: ServiceMetrics
    /// Uploaded images (docs/MEDIA.md), and their files as responses.
    let media: MediaLibrary
    let mediaFiles = MediaFiles()
    /// Named tokens (docs/TOKENS.md).
    let tokens: NamedTokens
    /// Changes to make later (docs/SCHEDULED.md).
    let scheduled: ScheduledChanges<HTTPOutlets>
    /// The 204 of each CORS variant, built once: receipts and views are answered with it thousands
    /// of times a second (docs/PERFORMANCE.md, "What a receipt costs").
    private let noContents: [String?: PreparedResponse]
    init(
        directory: CarouselDirectory<HTTPOutlets>, fleet: Fleet<HTTPOutlets>, screenEvents: ScreenEvents,
        outlets: HTTPOutlets,
        media: MediaLibrary, tokens: NamedTokens, scheduled: ScheduledChanges<HTTPOutlets>, web: StaticAssets,
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
        self.outlets = outlets
        self.web = web
        self.access = access
        self.cors = cors
        self.logger = logger
        noContents = Dictionary(
            uniqueKeysWithValues: cors.variants.map {
                ($0, PreparedResponse(Response(status: 204, headers: cors.headers(for: $0))))
            })
    }

    /// A 204 for a client whose origin resolved to `origin`.
    func noContent(for origin: String?) -> PreparedResponse {
        noContents[origin] ?? PreparedResponse(Response(status: 204, headers: cors.headers(for: origin)))
    }

    /// An event stream (`FastPath.stream`): held outside libmicrohttpd when it is a connection's
    /// first request.
    public func mayStream(_ path: Substring) -> Bool {
        Routes.endpoint(method: "GET", path: String(path))?.fastPath == .stream
    }

    /// What a read loop may answer (`FastPath.readLoop`): reads that never wait, the reports
    /// screens send most, receipts and views, which are checked and taken at once, and the
    /// commands sent with `POST`, whose connection waits in the loop while the engine runs them.
    public func answersWithoutStream(method: String, path: String) -> Bool {
        Routes.endpoint(method: method, path: path)?.fastPath == .readLoop
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
        case .deferred(let work, let executor):
            return .deferred(
                { [requests] in
                    let answer = await work()
                    requests.countDeferred(
                        route: route, method: method, status: answer.status,
                        nanoseconds: monotonicNanoseconds() &- started)
                    return answer
                }, on: executor)
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
        case .deferred(let work, let executor):
            return .deferred(
                {
                    let answer = await work()
                    // A command's answer carries it already: made once, not made again
                    // (docs/PERFORMANCE.md, "What a command costs").
                    if answer.headers.last == header { return answer }
                    var response = answer.response
                    response.headers.append(header)
                    return PreparedResponse(response)
                }, on: executor)
        case .prepared, .stream:
            return reply  // no write answers so
        }
    }

    /// The dispatch: the endpoint the route table finds, its rule applied (401 or 403 before the
    /// handler runs), then its handler; any problem answered as one, with CORS headers where the
    /// endpoint is for other origins.
    private func answer(_ request: borrowing Request, template: inout RouteTemplate?, requestID: inout String?)
        -> Reply
    {
        // Only looked up when CORS is on: reads stay one header lookup (If-None-Match) otherwise.
        var origin = cors.isEnabled ? cors.allowedOrigin(for: request.header("Origin")) : nil
        do throws(Problem) {
            if cors.isEnabled && request.method == "OPTIONS", let preflight = Routes.preflight(of: request.path) {
                template = preflight.template
                return .response(
                    ServiceHandlers.preflight(
                        allow: preflight.allow, crossOrigin: preflight.crossOrigin, origin: origin, cors: cors))
            }
            let route = try Routes.resolve(method: request.method, path: request.path, preflight: cors.isEnabled)
            template = route.template
            let endpoint = route.endpoint
            if endpoint.audited { requestID = RequestIDs.id(of: request) }
            if !endpoint.access.crossOrigin { origin = nil }
            let actor = try authorize(request, endpoint.access, carousel: route.carousel)
            return try endpoint.handle(
                self, request, Call(route: route, actor: actor, requestID: requestID, origin: origin))
        } catch {
            template = template ?? Routes.template(of: request.path)
            var problem = error
            problem.headers += cors.headers(for: origin)
            let reply = Reply.response(problem.response)
            if request.sends(reply) {  // else logged where it is asked again and sent
                let line = "\(Self.label(request, requestID)) refused: \(error.status) \(error.detail)"
                if error.status == 401 || error.status == 403 {
                    logRefusedCredentials(line)
                } else {
                    logger.log(request.method == "GET" || request.method == "HEAD" ? .debug : .notice, line)
                }
            }
            return reply
        }
    }

    /// A 401 or 403, at info whatever the method (a guess leaves a trace), within the log's budget.
    private func logRefusedCredentials(_ line: String) {
        guard logger.minimumLevel <= .info else { return }
        guard case .log(let dropped) = refusedCredentials.admit(at: monotonicNanoseconds()) else { return }
        if dropped > 0 {
            logger.info(
                "\(dropped) more requests refused for their credentials (401, 403) were not logged (at most "
                    + "\(refusedCredentials.limit) lines each \(refusedCredentials.window / 1_000_000_000) s)")
        }
        logger.info(line)
    }

    /// Who the request acts as, when `rule` lets it call an endpoint about `carousel` (nil: about
    /// none, or all); else the 401 or 403. Nil for endpoints anyone may call.
    private func authorize(_ request: borrowing Request, _ rule: Access, carousel: String?) throws(Problem)
        -> String?
    {
        switch rule {
        case .public, .screen: nil
        case .control: try access.authorizeControl(request, carousel: carousel)
        case .stats: try access.authorizeStats(request, carousel: carousel)
        case .admin: try access.authorizeAdmin(request, carousel: carousel)
        }
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

    /// How log lines name a request: `POST /banner/next`, and for a write the audit log keeps,
    /// its id (`POST /banner/next [3ca95014-…]`), to match the line with the entry.
    static func label(_ request: borrowing Request, _ requestID: String?) -> String {
        "\(request.method) \(request.path)" + (requestID.map { " [\($0)]" } ?? "")
    }

    /// The carousel a call is about, or the 404 naming it.
    func carousel(_ call: Call) throws(Problem) -> ServedCarousel {
        guard let name = call.route.carousel, let live = directory.carousel(named: name) else {
            throw Problem.notFound(carousel: call.route.carousel ?? "")
        }
        return live
    }

    /// A refusal found while deferred work ran: logged (an error from 500 up), answered.
    func refused(_ error: Problem, label: String, origin: String?) -> PreparedResponse {
        var problem = error
        if problem.status >= 500 {
            logger.error("\(label) failed: \(problem.status) \(problem.detail)")
        } else {
            logger.notice("\(label) refused: \(problem.status) \(problem.detail)")
        }
        problem.headers += cors.headers(for: origin)
        return PreparedResponse(problem.response)
    }
}
