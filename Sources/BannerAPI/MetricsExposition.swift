import CarouselRuntime
import Metrics
import MicroHTTP

/// `GET /metrics` (docs/METRICS.md): the service's counters in Prometheus' text format 0.0.4,
/// written afresh for each scrape.
enum MetricsExposition {
    static func response(
        requests: RequestMetrics, service: ServiceMetrics, fleet: Fleet<HTTPOutlets>,
        subscribers: (ownSocket: Int, libmicrohttpd: Int)
    ) -> Response {
        var text = ""
        requests.write(to: &text)
        service.write(to: &text)
        fleet.writeMetrics(to: &text)
        text += "# HELP banner_event_stream_subscribers Event-stream subscribers connected now, by who holds their "
        text +=
            "connection: the service on its own socket, or libmicrohttpd (a stream asked for on a used connection).\n"
        text += "# TYPE banner_event_stream_subscribers gauge\n"
        text += "banner_event_stream_subscribers{held_by=\"service\"} \(subscribers.ownSocket)\n"
        text += "banner_event_stream_subscribers{held_by=\"libmicrohttpd\"} \(subscribers.libmicrohttpd)\n"
        ProcessMetrics.write(to: &text)
        return Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-store"),
            ],
            body: Array(text.utf8))
    }
}
