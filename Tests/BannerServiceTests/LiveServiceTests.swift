import BannerService
import Carousel
import CarouselRuntime
import Foundation
import Logging
import TestSupport
import Testing
import TimeZones

/// The whole service on 127.0.0.1, an ephemeral port, the real clock, spoken to over HTTP; by
/// default on a fresh SQLite store (the embedded default), while `RouterHarness` runs on the
/// memory store: the suites shared by both run on each.
final class LiveService: Sendable {
    let service: CarouselService
    var port: Int { service.port }

    init(
        banners: Int = 5, interval: Duration = .seconds(3600), autoplay: Bool = true, token: String? = nil,
        adminToken: String? = nil, heartbeat: Duration = .seconds(15), corsOrigins: [String] = [],
        store: StoreLocation? = nil, fastPaths: Bool = true, fleet: FleetSettings = FleetSettings(),
        webhookAllowPrivate: Bool = false
    ) async throws {
        try TestTier.needs("a live service")
        var configuration = ServiceConfiguration()
        configuration.webhookAllowPrivate = webhookAllowPrivate
        configuration.fleet = fleet
        configuration.fastPaths = fastPaths
        configuration.store =
            try store ?? .sqlite(path: temporaryDirectory().appendingPathComponent("carousel.db").path)
        configuration.adminToken = adminToken
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.interval = interval
        configuration.autoplay = autoplay
        configuration.banners = sampleBanners(banners)
        configuration.controlToken = token
        configuration.heartbeat = heartbeat
        configuration.corsOrigins = corsOrigins
        // A test's client waits for a thread of the pool every test shares between two requests on
        // one connection; a loaded run (every test at once on two cores, sanitizers) kept one
        // waiting past the usual 15 s, and the server rightly closed the idle connection. Tests of
        // the timeout itself start servers of their own (MicroHTTPTests, HardeningTests).
        configuration.connectionTimeout = Int(60 * sanitizerAllowance)
        // Opening the store waits on the disk: not on the pool every test's tasks share.
        service = try await offThePool { [configuration] in
            try CarouselService.start(
                configuration: configuration, logger: Logger(label: "test", minimumLevel: .critical))
        }
    }

    /// Stopping waits for the server's threads: on a thread of its own, after the test.
    deinit {
        let service = service
        offThePoolLater { service.stop() }
    }

    func request(_ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil) async throws
        -> HTTPResponse
    {
        try await httpRequest(port: port, method, path, headers: headers, body: body.map { Array($0.utf8) })
    }

    /// An upload is decoded on a thread of the lowest priority (docs/MEDIA.md):
    /// while the whole suite keeps every core busy it waits its turn, so it is given a minute.
    func request(_ method: String, _ path: String, headers: [(String, String)], bytes: [UInt8]) async throws
        -> HTTPResponse
    {
        try await HTTPConnection(port: port, timeoutSeconds: 60)
            .send(method, path, headers: headers, body: bytes)
    }

    func state() async throws -> [String: Any] {
        try await request("GET", "/banner").json
    }
}

func timestamp(_ text: Any?) throws -> Date {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return try #require((text as? String).flatMap(formatter.date(from:)))
}

@Suite("Live service over HTTP")
struct LiveServiceTests {
    @Test func everyEndpointAnswersOverHTTP() async throws {
        let live = try await LiveService()
        let connection = try HTTPConnection(port: live.port)
        let state = try await connection.send("GET", "/banner")
        #expect(state.status == 200)
        #expect(try state.json["count"] as? Int == 5)
        #expect(try await connection.send("GET", "/banners").json["count"] as? Int == 5)
        #expect(try await connection.send("GET", "/banner/index").text == "{\"index\":0,\"count\":5}\n")
        #expect(try await connection.send("GET", "/healthz").text == "{\"status\":\"ok\"}\n")
        #expect(try await connection.send("POST", "/banner/next").json["index"] as? Int == 1)
        #expect(try await connection.send("POST", "/banner/previous").json["index"] as? Int == 0)
        #expect(try await connection.send("PUT", "/banner/index", json: #"{"index": 4}"#).json["index"] as? Int == 4)
        #expect(
            try await connection.send("POST", "/banner/pause", json: #"{"seconds": 60}"#).json["paused"] as? Bool
                == true)
        #expect(try await connection.send("POST", "/banner/resume").json["paused"] as? Bool == false)
        #expect(!connection.isClosedByPeer, "all of it on one keep-alive connection")
    }

    /// `GET /time` reads the real clock: between the client's readings before and after asking.
    @Test func timeIsTheServersRealClock() async throws {
        let live = try await LiveService()
        let connection = try HTTPConnection(port: live.port)
        let before = Double(Timestamp.now().nanosecondsSinceEpoch) / 1e6
        let answer = try await connection.send("GET", "/time")
        let after = Double(Timestamp.now().nanosecondsSinceEpoch) / 1e6
        let epochMillis = try #require(try answer.json["epochMillis"] as? Double)
        #expect(before <= epochMillis + 0.001 && epochMillis <= after + 0.001, "\(before) ≤ \(epochMillis) ≤ \(after)")
    }

    @Test func headAnswersTheHeadersOfGetWithoutABody() async throws {
        let live = try await LiveService()
        let connection = try HTTPConnection(port: live.port)
        for path in ["/banner", "/banners", "/banner/index", "/healthz", "/time"] {
            let get = try await connection.send("GET", path)
            let head = try await connection.send("HEAD", path)
            #expect(head.status == 200)
            #expect(head.header("Content-Length") == String(get.body.count))
            #expect(head.header("Content-Type") == get.header("Content-Type"))
        }
    }

    @Test func errorsOverHTTPAreProblemJSONAndChangeNothing() async throws {
        let live = try await LiveService()
        let before = try await live.state()
        let cases: [(String, String, [(String, String)], String?, Int)] = [
            ("GET", "/nope", [], nil, 404),
            ("DELETE", "/banner", [], nil, 405),
            ("PUT", "/banner/index", [("Content-Type", "application/json")], "{\"index\": ", 400),
            ("PUT", "/banner/index", [("Content-Type", "application/json")], "{\"index\": \"1\"}", 400),
            ("PUT", "/banner/index", [("Content-Type", "application/json")], "{\"index\": 9}", 422),
            ("POST", "/banner/pause", [("Content-Type", "application/json")], "{\"seconds\": 0}", 422),
            ("PUT", "/banner/index", [("Content-Type", "text/plain")], "{\"index\": 1}", 415),
            ("POST", "/banner/next", [], String(repeating: " ", count: 16 * 1024 + 1), 413),
        ]
        for (method, path, headers, body, status) in cases {
            let response = try await live.request(method, path, headers: headers, body: body)
            #expect(response.status == status, "\(method) \(path)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(try response.json["status"] as? Int == status)
        }
        let after = try await live.state()
        #expect(after["version"] as? Int == before["version"] as? Int)
        #expect(after["index"] as? Int == before["index"] as? Int)
    }

    @Test func a405CarriesAllow() async throws {
        let live = try await LiveService()
        let response = try await live.request("DELETE", "/banner/index")
        #expect(response.header("Allow") == "GET, HEAD, PUT")
    }

    @Test func aBodyOfExactlyTheLimitIsAccepted() async throws {
        let live = try await LiveService()
        let padding = String(repeating: " ", count: 16 * 1024 - 2)
        let response = try await live.request(
            "POST", "/banner/next", headers: [("Content-Type", "application/json")], body: "{" + padding + "}")
        #expect(response.status == 200)
    }

    @Test func movesWithoutBannersAre409() async throws {
        let live = try await LiveService(banners: 0)
        let response = try await live.request("POST", "/banner/next")
        #expect(response.status == 409)
        #expect(try await live.state()["count"] as? Int == 0)
        #expect(try await live.state()["index"] is NSNull)
    }

    @Test func theTokenGuardsCommandsOverHTTP() async throws {
        let live = try await LiveService(token: "t0ken")
        let refused = try await live.request("POST", "/banner/next")
        #expect(refused.status == 401)
        #expect(refused.header("WWW-Authenticate") == "Bearer")
        let accepted = try await live.request("POST", "/banner/next", headers: [("Authorization", "Bearer t0ken")])
        #expect(accepted.status == 200)
        #expect(try accepted.json["version"] as? Int == 2)
    }

    @Test func aReadAfterACompletedCommandSeesItsResult() async throws {
        let live = try await LiveService()
        let commands = try HTTPConnection(port: live.port)
        let reads = try HTTPConnection(port: live.port)
        for _ in 0..<50 {
            let command = try await commands.send("POST", "/banner/next").json
            let read = try await reads.send("GET", "/banner").json
            #expect(read["version"] as? Int == command["version"] as? Int)
            #expect(read["index"] as? Int == command["index"] as? Int)
        }
    }

    @Test func eightClientsSending200NextsLoseNone() async throws {
        let live = try await LiveService(autoplay: false)
        let port = live.port
        let versions = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let connection = try HTTPConnection(port: port)
                    var seen: [Int] = []
                    for _ in 0..<25 {
                        let response = try await connection.send("POST", "/banner/next")
                        #expect(response.status == 200)
                        seen.append(try response.json["version"] as? Int ?? -1)
                    }
                    return seen
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(versions) == Set(2...201), "each next got its own version")
        let final = try await live.state()
        #expect(final["version"] as? Int == 201)
        #expect(final["index"] as? Int == 200 % 5)
    }

    @Test func theCarouselAdvancesByItselfOnAScheduleWithoutDrift() async throws {
        let live = try await LiveService(interval: .milliseconds(200))
        let first = try await live.state()
        let firstDue = try timestamp(first["nextAdvanceAt"])
        var later = first
        // Three advances after the first look, however late that look came.
        let firstVersion = try #require(first["version"] as? Int)
        #expect(
            try await eventually {
                later = try await live.state()
                return (later["version"] as? Int ?? 0) >= firstVersion + 3
            })
        #expect(later["index"] as? Int != nil)
        let laterDue = try timestamp(later["nextAdvanceAt"])
        let steps = laterDue.timeIntervalSince(firstDue) / 0.2
        #expect(steps.rounded() >= 3)
        #expect(abs(steps - steps.rounded()) < 0.01, "due times stay on first + k × 200 ms")
    }

    @Test func aTimedPauseEndsByItself() async throws {
        let live = try await LiveService(interval: .seconds(60))
        let paused = try await live.request(
            "POST", "/banner/pause", headers: [("Content-Type", "application/json")], body: #"{"seconds": 0.2}"#
        ).json
        #expect(paused["paused"] as? Bool == true)
        var resumed: [String: Any] = [:]
        #expect(
            try await eventually {
                resumed = try await live.state()
                return resumed["paused"] as? Bool == false
            })
        let end = try timestamp(paused["pausedUntil"])
        let restartedCountdown = try timestamp(resumed["nextAdvanceAt"]).timeIntervalSince(end)
        #expect(abs(restartedCountdown - 60) < 0.0005, "the countdown restarts when the pause ended")
    }
}
