import Foundation
import TestSupport
import Testing

/// `GET /metrics` (docs/METRICS.md): Prometheus' text format, requests counted by the route
/// template their path matched, never by the path itself.
@Suite("Metrics")
struct MetricsTests {
    /// The samples of an exposition, by series (`name{labels}`).
    static func samples(_ text: String) -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            samples[String(line[..<space])] = value
        }
        return samples
    }

    @Test(arguments: [Transport.router, .live])
    func requestsAreCountedByRouteTemplateMethodAndStatus(_ transport: Transport) async throws {
        let service = try await transport.start()
        for _ in 0..<3 { #expect(try await service.request("GET", "/banner").status == 200) }
        #expect(try await service.request("GET", "/carousels/no-such-one/banner").status == 404)
        #expect(try await service.request("GET", "/random/x9f3").status == 404)
        #expect(try await service.request("POST", "/banner/next").status == 200)  // a deferred answer
        let metrics = try await service.request("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4; charset=utf-8")
        #expect(metrics.header("Cache-Control") == "no-store")
        let samples = Self.samples(metrics.text)
        #expect(samples[#"banner_http_requests_total{route="/banner",method="GET",status="200"}"#] == 3)
        #expect(
            samples[#"banner_http_requests_total{route="/carousels/{name}/banner",method="GET",status="404"}"#] == 1)
        #expect(samples[#"banner_http_requests_total{route="other",method="GET",status="404"}"#] == 1)
        #expect(samples[#"banner_http_requests_total{route="/banner/next",method="POST",status="200"}"#] == 1)
        #expect(samples[#"banner_http_request_duration_seconds_count{route="/banner"}"#] == 3)
        #expect(samples[#"banner_http_request_duration_seconds_bucket{route="/banner",le="+Inf"}"#] == 3)
        #expect(samples[#"banner_http_request_duration_seconds_count{route="/banner/next"}"#] == 1)
        #expect(!metrics.text.contains("no-such-one") && !metrics.text.contains("x9f3"), "no raw path is a label")
    }

    /// The live output as Prometheus' own checker reads it (Debian's `prometheus` package, which
    /// `make test` installs), with subscribers and the process' figures in it. A stream asked for as
    /// a connection's first request is held by the service; one on a used connection by libmicrohttpd.
    @Test func promtoolAcceptsTheLiveOutput() async throws {
        let live = try LiveService()
        let fresh = try HTTPConnection(port: live.port)
        #expect(try await fresh.openStream("/banner/events").status == 200)
        let used = try HTTPConnection(port: live.port)
        #expect(try await used.send("GET", "/banner").status == 200)
        #expect(try await used.openStream("/banner/events").status == 200)
        var text = ""
        #expect(
            await eventually {
                text = (try? await live.request("GET", "/metrics").text) ?? ""
                let samples = Self.samples(text)
                return samples[#"banner_event_stream_subscribers{held_by="service"}"#] == 1
                    && samples[#"banner_event_stream_subscribers{held_by="libmicrohttpd"}"#] == 1
            }, "\(text)")
        let samples = Self.samples(text)
        for family in [
            "process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds", "process_max_fds",
            "process_start_time_seconds",
        ] {
            #expect((samples[family] ?? 0) > 0, "\(family)")
        }
        let file = try temporaryFile(contents: text)
        let check = try ServerProcess(
            executable: URL(fileURLWithPath: "/bin/sh"),
            arguments: ["-c", "/usr/bin/promtool check metrics < \(file.path)"])
        #expect(await check.waitForExit(seconds: 30) == 0, "\(check.standardOutput)\(check.standardError)")
        #expect(check.standardOutput.isEmpty && check.standardError.isEmpty, "no lint warning either")
    }

    /// A real Prometheus (Debian's 2.42) scrapes the service every second: a PromQL query over its
    /// HTTP API sees the requests made.
    @Test func prometheusScrapesTheServiceAndCountsItsRequests() async throws {
        let live = try LiveService()
        for _ in 0..<3 { #expect(try await live.request("GET", "/banner").status == 200) }
        let directory = try temporaryDirectory()
        let configuration = directory.appendingPathComponent("prometheus.yml")
        try """
        global:
          scrape_interval: 1s
        scrape_configs:
          - job_name: banner
            static_configs:
              - targets: ['127.0.0.1:\(live.port)']
        """.write(to: configuration, atomically: true, encoding: .utf8)
        let port = try freeLoopbackPort()
        let prometheus = try ServerProcess(
            executable: URL(fileURLWithPath: "/usr/bin/prometheus"),
            arguments: [
                "--config.file=\(configuration.path)", "--storage.tsdb.path=\(directory.path)/data",
                "--web.listen-address=127.0.0.1:\(port)",
            ])
        let query = #"banner_http_requests_total{job="banner",route="/banner",method="GET",status="200"}"#
        let encoded = query.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? query
        var answered = ""
        let counted = await eventually(within: 60) {
            guard let response = try? await httpRequest(port: port, "GET", "/api/v1/query?query=\(encoded)"),
                response.status == 200, let json = try? response.json, let data = json["data"] as? [String: Any],
                let result = data["result"] as? [[String: Any]], let value = result.first?["value"] as? [Any]
            else { return false }
            answered = "\(value)"
            return value.last as? String == "3"
        }
        #expect(counted, "Prometheus answered \(answered); its log: \(prometheus.standardError.suffix(2000))")
        prometheus.signal(SIGTERM)
        #expect(await prometheus.waitForExit(seconds: 30) != nil)
    }
}
