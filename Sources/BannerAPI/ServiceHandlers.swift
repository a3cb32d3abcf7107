import Definitions
import Metrics
import MicroHTTP

/// The service's own endpoints: alive, ready, its clock, its metrics, the files it serves, and
/// CORS preflights.
enum ServiceHandlers {
    /// No validator to revalidate with, so nothing may keep a copy: a cached "ok" would hide a dead process.
    private static let healthy = PreparedResponse(
        Response(
            status: 200,
            headers: [PreparedReads.jsonContentType, HTTPHeader("Cache-Control", "no-store")],
            body: Array("{\"status\":\"ok\"}\n".utf8)))

    /// `GET /readyz` while ready; the same caching rule as the health check's.
    private static let ready = PreparedResponse(
        Response(
            status: 200,
            headers: [PreparedReads.jsonContentType, HTTPHeader("Cache-Control", "no-store")],
            body: Array("{\"status\":\"ready\"}\n".utf8)))

    /// `GET /healthz`: the process is alive.
    static func health(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .prepared(healthy)
    }

    /// `GET /readyz`: 200 when the store can be reached and the carousels are loaded.
    static func readiness(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        if let reason = api.notReady() {
            throw Problem(
                status: 503, detail: "not ready: \(reason)",
                headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")])
        }
        return .prepared(ready)
    }

    /// `GET /time`: the service's clock, for screens that flip in step (docs/SCREENS.md).
    static func time(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .response(ServiceTime.response(at: api.clock(), headers: api.cors.headers(for: call.origin)))
    }

    /// `GET /metrics`: Prometheus' text format (docs/METRICS.md).
    static func metrics(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .response(
            MetricsExposition.response(
                requests: api.requests, service: api.metrics, fleet: api.fleet, subscribers: api.subscribers()))
    }

    /// A file of the web client or the OpenAPI document, at its own path.
    static func file(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .prepared(api.web.response(call.route.endpoint.template, ifNoneMatch: request.header("If-None-Match")))
    }

    /// 204 with the path's methods; the CORS grant only for an allowed origin, and only of the
    /// methods other origins may use (`crossOrigin`: none of the admin or stats roles').
    static func preflight(allow: String, crossOrigin: String?, origin: String?, cors: CORSPolicy) -> Response {
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
}
