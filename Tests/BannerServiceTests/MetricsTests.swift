import Carousel
import Foundation
import TestSupport
import Testing
import TimeZones

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

    /// Counted once, where a request is answered: a subscription refused on the acceptor's
    /// thread is answered by libmicrohttpd, which asks the handler again.
    @Test(arguments: [Transport.router, .live, .libmicrohttpd])
    func requestsAreCountedByRouteTemplateMethodAndStatus(_ transport: Transport) async throws {
        let service = try await transport.start()
        for _ in 0..<3 { #expect(try await service.request("GET", "/banner").status == 200) }
        for _ in 0..<5 { #expect(try await service.request("GET", "/carousels/nope/banner/events").status == 404) }
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
        #expect(
            samples[#"banner_http_requests_total{route="/carousels/{name}/banner/events",method="GET",status="404"}"#]
                == 5)
        #expect(samples[#"banner_http_requests_total{route="/banner/next",method="POST",status="200"}"#] == 1)
        #expect(samples[#"banner_http_request_duration_seconds_count{route="/banner"}"#] == 3)
        #expect(samples[#"banner_http_request_duration_seconds_bucket{route="/banner",le="+Inf"}"#] == 3)
        #expect(samples[#"banner_http_request_duration_seconds_count{route="/banner/next"}"#] == 1)
        #expect(!metrics.text.contains("no-such-one") && !metrics.text.contains("x9f3"), "no raw path is a label")
    }

    /// Changes by cause, plays, views, clicks and the store's operations (docs/METRICS.md).
    @Test(arguments: [Transport.router, .live])
    func changesViewsClicksAndStoreOperationsAreCounted(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await service.request("POST", "/banner/next").status == 200)
        #expect(try await service.request("POST", "/banner/next").status == 200)
        let patched = try await service.request(
            "PATCH", "/carousels/default", headers: [("Content-Type", "application/json")], body: #"{"interval": 3000}"#
        )
        #expect(patched.status == 200)
        let edited = try await service.request(
            "PATCH", "/carousels/default/banners/b0", headers: [("Content-Type", "application/json")],
            body: #"{"link": "https://shop.example.com/"}"#)
        #expect(edited.status == 200)
        #expect(try await service.request("GET", "/carousels/default/banners/b0/click").status == 302)
        let millis = try #require(try await service.request("GET", "/time").json["epochMillis"] as? Double)
        let at = Timestamp(nanosecondsSinceEpoch: Int64(millis) * 1_000_000).rfc3339
        let views = try await service.request(
            "POST", "/carousels/default/views", headers: [("Content-Type", "application/json")],
            body:
                #"{"views": [{"banner": "b1", "at": "\#(at)", "ms": 1000}, {"banner": "b2", "at": "\#(at)", "ms": 1000}]}"#
        )
        #expect(views.status == 204)
        let samples = Self.samples(try await service.request("GET", "/metrics").text)
        #expect(samples[#"banner_carousel_changes_total{cause="command"}"#] == 2)
        #expect(samples[#"banner_carousel_changes_total{cause="admin"}"#] == 2)
        #expect(samples["banner_views_total"] == 2 && samples["banner_clicks_total"] == 1)
        // Two banners became current by the commands; the router's carousel is never started, so
        // the first state it sees (the first command's) is one it found, not one it saw begin.
        #expect(samples["banner_plays_total"] == (transport == .live ? 2 : 1))
        #expect(samples[#"banner_store_operation_duration_seconds_count{operation="command"}"#] == 2)
        #expect(samples[#"banner_store_operation_duration_seconds_count{operation="admin"}"#] == 2)
        #expect(samples["banner_store_up"] == 1)
    }

    /// A carousel advancing by itself: each advance counted, and how late its timer fired.
    @Test func advancesAreCountedWithTheirTimersLateness() async throws {
        let live = try await LiveService(interval: .milliseconds(200))
        var samples: [String: Double] = [:]
        #expect(
            await eventually {
                samples = Self.samples((try? await live.request("GET", "/metrics").text) ?? "")
                return (samples["banner_advance_lateness_seconds_count"] ?? 0) >= 2
            })
        // The catch-up at start is an advance with no timer of its own to be late.
        let advances = samples[#"banner_carousel_changes_total{cause="advance"}"#] ?? 0
        #expect(advances >= samples["banner_advance_lateness_seconds_count"] ?? 0)
        #expect(
            samples[#"banner_advance_lateness_seconds_bucket{le="+Inf"}"#]
                == samples["banner_advance_lateness_seconds_count"])
        #expect(samples[#"banner_carousel_changes_total{cause="schedule"}"#] == 0)
    }

    /// The live output as Prometheus' own checker reads it (Debian's `prometheus` package, which
    /// `make test` installs), with subscribers and the process' figures in it. A stream asked for as
    /// a connection's first request is held by the service; one on a used connection by libmicrohttpd.
    @Test func promtoolAcceptsTheLiveOutput() async throws {
        let live = try await LiveService()
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
        let live = try await LiveService()
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
