import MicroHTTP
import Platform

/// `GET /metrics` (docs/METRICS.md): the service's counters in Prometheus' text format 0.0.4,
/// written afresh for each scrape.
enum MetricsExposition {
    static func response(
        requests: RequestMetrics, service: ServiceMetrics, subscribers: (ownSocket: Int, libmicrohttpd: Int)
    ) -> Response {
        var text = ""
        requests.write(to: &text)
        service.write(to: &text)
        text += "# HELP banner_event_stream_subscribers Event-stream subscribers connected now, by who holds their "
        text +=
            "connection: the service on its own socket, or libmicrohttpd (a stream asked for on a used connection).\n"
        text += "# TYPE banner_event_stream_subscribers gauge\n"
        text += "banner_event_stream_subscribers{held_by=\"service\"} \(subscribers.ownSocket)\n"
        text += "banner_event_stream_subscribers{held_by=\"libmicrohttpd\"} \(subscribers.libmicrohttpd)\n"
        // Named, typed and described as Prometheus' own client libraries write them.
        let process = ProcessStats.now()
        let processFamilies: [(name: String, type: String, help: String, value: Double?)] = [
            (
                "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
                process.cpuSeconds
            ),
            (
                "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                process.residentBytes.map(Double.init)
            ),
            (
                "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                process.virtualBytes.map(Double.init)
            ),
            ("process_open_fds", "gauge", "Number of open file descriptors.", process.openDescriptors.map(Double.init)),
            (
                "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                process.maxDescriptors.map(Double.init)
            ),
            (
                "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                process.startTimeSeconds
            ),
        ]
        for family in processFamilies {
            Self.family(family.name, type: family.type, help: family.help, value: family.value, into: &text)
        }
        return Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-store"),
            ],
            body: Array(text.utf8))
    }

    /// A family of one sample without labels; left out when the value is unknown.
    private static func family(_ name: String, type: String, help: String, value: Double?, into text: inout String) {
        guard let value else { return }
        text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
    }
}
