import CarouselRuntime
import Foundation
import TestSupport
import Testing
import TimeZones

/// The fleet over HTTP (docs/SCREENS.md, "The fleet"): screens named on polls and streams,
/// receipts, the lists and the events, against the whole service on 127.0.0.1.
@Suite("Screens over HTTP")
struct ScreensAPITests {
    /// Every screen `GET /screens` lists, by id.
    static func screens(_ live: LiveService, path: String = "/screens") async throws -> [String: [String: Any]] {
        let list = try await live.request("GET", path)
        #expect(list.status == 200)
        let entries = try #require(try list.json["screens"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: entries.map { ($0["id"] as! String, $0) })
    }

    static func receipts(_ receipts: String) -> String { #"{"receipts": ["# + receipts + "]}" }

    /// With the fast paths on, the poll and the stream are answered outside libmicrohttpd; off,
    /// by it: the screens are heard the same either way.
    @Test(arguments: [true, false])
    func screensNamedOnPollsAndStreamsAreListedOnline(fastPaths: Bool) async throws {
        // A timeout no loaded run outlasts: the poll is listed online however long the stream takes.
        let live = try await LiveService(fastPaths: fastPaths, fleet: FleetSettings(screenTimeout: .seconds(3600)))
        #expect(try await live.request("GET", "/banner?screen=wall-1").status == 200)
        let connection = try HTTPConnection(port: live.port)
        let stream = try await connection.openStream(
            "/carousels/default/banner/events", headers: [("X-Screen-Id", "lobby.tv_2"), ("User-Agent", "Kiosk/1")])
        #expect(stream.status == 200)
        var listed: [String: [String: Any]] = [:]
        #expect(
            try await eventually {
                listed = try await Self.screens(live)
                return listed.count == 2
            })
        #expect(listed["wall-1"]?["state"] as? String == "online")
        #expect(listed["wall-1"]?["via"] as? String == "poll")
        #expect(listed["lobby.tv_2"]?["via"] as? String == "stream")
        #expect(listed["lobby.tv_2"]?["userAgent"] as? String == "Kiosk/1")
        #expect(listed["lobby.tv_2"]?["carousel"] as? String == "default")
        #expect(listed["wall-1"]?["shown"] is NSNull)
        #expect(try await Self.screens(live, path: "/carousels/default/screens").count == 2)
    }

    @Test(
        arguments: [
            "/banner?screen=Wall", "/banner?screen=-a", "/banner?screen=" + String(repeating: "a", count: 65),
        ], [true, false])
    func anInvalidScreenIdIsRefusedWithTheRule(_ path: String, fastPaths: Bool) async throws {
        let live = try await LiveService(fastPaths: fastPaths)
        let refused = try await live.request("GET", path)
        #expect(refused.status == 400)
        #expect(refused.problemDetail?.contains("a-z, 0-9") == true)
        let byHeader = try await live.request("GET", "/banner", headers: [("X-Screen-Id", "UPPER")])
        #expect(byHeader.status == 400)
        #expect(try await live.request("GET", "/banner").status == 200)
    }

    @Test func receiptsAreJudgedAndListedAndImpossibleOnesChangeNothing() async throws {
        // No tolerance: a flip reported for now, however soon after the service started, is late.
        // And a timeout no loaded run outlasts: the screen stays online while the test checks it.
        let live = try await LiveService(
            fleet: FleetSettings(screenTimeout: .seconds(3600), stepTolerance: .zero))
        let state = try await live.state()
        let version = try #require(state["version"] as? Int)
        let now = Timestamp.now()
        let json =
            #"{"version": \#(version), "banner": "b0", "shownAt": "\#(now.rfc3339)", "offsetMs": -4, "rttMs": 12}"#
        let path = "/carousels/default/screens/wall-1/receipts"
        let cases: [(String, Int, String)] = [
            (#"{"version": \#(version), "banner": "nope", "shownAt": "\#(now.rfc3339)"}"#, 422, "receipts[1].banner"),
            (
                #"{"version": \#(version + 5), "banner": "b0", "shownAt": "\#(now.rfc3339)"}"#, 422,
                "receipts[1].version"
            ),
            (
                #"{"version": \#(version), "banner": "b0", "shownAt": "\#((now + .seconds(7200)).rfc3339)"}"#, 422,
                "receipts[1].shownAt"
            ),
            (#"{"version": "1", "banner": "b0", "shownAt": "\#(now.rfc3339)"}"#, 400, "receipts[1].version"),
            (#"{"version": 1, "banner": "b0", "shownAt": "yesterday"}"#, 400, "receipts[1].shownAt"),
            (#"{"version": 1, "banner": "b0", "shownAt": "\#(now.rfc3339)", "rttMs": -1}"#, 400, "receipts[1].rttMs"),
        ]
        for (bad, status, field) in cases {
            let refused = try await live.request(
                "POST", path, headers: [("Content-Type", "application/json")], body: Self.receipts(json + ", " + bad))
            #expect(refused.status == status, "\(bad)")
            #expect(refused.problemDetail?.contains(field) == true, "\(refused.problemDetail ?? "")")
        }
        let tooMany = Array(repeating: json, count: 101).joined(separator: ", ")
        #expect(
            try await live.request(
                "POST", path, headers: [("Content-Type", "application/json")], body: Self.receipts(tooMany)
            ).status == 413)
        #expect(try await live.request("POST", "/carousels/default/screens/Bad/receipts", body: "{}").status == 400)
        // Nothing kept of any of them: the screen is heard of once a valid report comes, sent as a beacon.
        let taken = try await live.request(
            "POST", path, headers: [("Content-Type", "text/plain")], body: Self.receipts(json))
        #expect(taken.status == 204)
        var listed: [String: [String: Any]] = [:]
        #expect(
            try await eventually {
                listed = try await Self.screens(live)
                return listed["wall-1"]?["shown"] is [String: Any]
            })
        #expect(listed.count == 1)
        let shown = try #require(listed["wall-1"]?["shown"] as? [String: Any])
        #expect(shown["banner"] as? String == "b0" && shown["version"] as? Int == version)
        #expect(listed["wall-1"]?["offsetMs"] as? Int == -4 && listed["wall-1"]?["rttMs"] as? Int == 12)
        // b0 has been shown since the service started, before the receipt's instant: late.
        #expect(listed["wall-1"]?["state"] as? String == "out-of-step")
        #expect(listed["wall-1"]?["reason"] as? String == "late")
    }

    /// Made-up screen ids past `maxScreens` cannot lock out a real screen: its reads and its stream
    /// are served, untracked (found from outside: 40 ids made every new visitor's read a 429).
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func aNewScreenPastTheLimitIsServedUntrackedAndKnownOnesGoOn(_ transport: Transport) async throws {
        // A timeout no loaded run outlasts: `first` stays online, so it makes no room for another.
        let live = try await LiveService(
            fastPaths: transport == .live, fleet: FleetSettings(screenTimeout: .seconds(3600), maxScreens: 1))
        #expect(try await live.request("GET", "/banner?screen=first").status == 200)
        let past = try await live.request("GET", "/banner", headers: [("X-Screen-Id", "second")])
        #expect(past.status == 200, "\(past.text)")
        #expect(try await live.request("GET", "/carousels/default/banner?screen=third").status == 200)
        let stream = try HTTPConnection(port: live.port)
        #expect(try await stream.openStream("/banner/events?screen=fourth").status == 200)
        let receipt = try await live.request(
            "POST", "/carousels/default/screens/second/receipts", headers: [("Content-Type", "application/json")],
            body: #"{"receipts": []}"#)
        #expect(receipt.status == 429, "a report is what the limit refuses")
        #expect(receipt.problemDetail?.contains("CAROUSEL_MAX_SCREENS") == true)
        #expect(try await live.request("GET", "/banner?screen=first").status == 200)
        var listed: [String: [String: Any]] = [:]
        #expect(
            try await eventually {
                listed = try await Self.screens(live)
                return !listed.isEmpty
            })
        #expect(Set(listed.keys) == ["first"], "the others are not tracked")
    }

    /// A screen's reports are its own (docs/SCREENS.md, "A screen's own reports"; found from
    /// outside: one anonymous receipt for a screen put it out of step and replaced its user agent).
    /// The first key claims it; a stranger's poll and stream are served and change nothing, their
    /// receipts are 403; an operator forgetting the screen lets a new key claim it.
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func aClaimedScreensReportsAreItsOwn(_ transport: Transport) async throws {
        let live = try await LiveService(
            fastPaths: transport == .live, fleet: FleetSettings(screenTimeout: .seconds(3600)))
        let (own, other) = ("own-key-0123456789abcdef", "someone-elses-key-0123")
        let claimed = try await live.request(
            "GET", "/banner?screen=wall-1&screenKey=\(own)", headers: [("User-Agent", "Kiosk/1")])
        #expect(claimed.status == 200)
        #expect(try await eventually { try await Self.screens(live)["wall-1"] != nil })
        // A stranger, without the key and with another: served all the same.
        let version = try #require(try await live.state()["version"] as? Int)
        let wrong = Self.receipts(
            #"{"version": \#(version), "banner": "b1", "shownAt": "\#(Timestamp.now().rfc3339)"}"#)
        let receipts = "/carousels/default/screens/wall-1/receipts"
        for key in [nil, other] {
            let keyHeader = key.map { [("X-Screen-Key", $0)] } ?? []
            let poll = try await live.request(
                "GET", "/banner", headers: [("X-Screen-Id", "wall-1"), ("User-Agent", "Intruder")] + keyHeader)
            #expect(poll.status == 200)
            let stream = try HTTPConnection(port: live.port)
            let query = key.map { "&screenKey=\($0)" } ?? ""
            #expect(try await stream.openStream("/banner/events?screen=wall-1\(query)").status == 200)
            stream.hangUp()
            let refused = try await live.request(
                "POST", receipts + (key.map { "?screenKey=\($0)" } ?? ""),
                headers: [("Content-Type", "text/plain"), ("User-Agent", "Intruder")], body: wrong)
            #expect(refused.status == 403, "\(refused.text)")
            #expect(refused.problemDetail?.contains("claimed by another key") == true)
        }
        let invalid = try await live.request("GET", "/banner?screen=wall-1&screenKey=short")
        #expect(invalid.status == 400 && invalid.problemDetail?.contains("16 to 128") == true)
        // Heard after the stranger: once it is listed, what the stranger sent would be too.
        #expect(try await live.request("GET", "/banner?screen=marker").status == 200)
        var listed: [String: [String: Any]] = [:]
        #expect(
            try await eventually {
                listed = try await Self.screens(live)
                return listed["marker"] != nil
            })
        #expect(listed["wall-1"]?["userAgent"] as? String == "Kiosk/1")
        #expect(listed["wall-1"]?["state"] as? String == "online" && listed["wall-1"]?["shown"] is NSNull)

        let forget = "/carousels/default/screens/wall-1"
        #expect(try await live.request("DELETE", forget).status == 204)
        #expect(try await live.request("DELETE", forget).status == 404)
        #expect(try await Self.screens(live)["wall-1"] == nil)
        let log = try #require(try await live.request("GET", "/audit").json["entries"] as? [[String: Any]])
        #expect(log.first?["action"] as? String == "screen.forget" && log.first?["target"] as? String == "wall-1")
        let reclaimed = try await live.request(
            "POST", receipts, headers: [("Content-Type", "application/json"), ("X-Screen-Key", other)], body: wrong)
        #expect(reclaimed.status == 204)
        #expect(
            try await eventually {
                try await Self.screens(live)["wall-1"]?["shown"] is [String: Any]
            })
    }

    /// An invalid screen key is refused wherever it is given, with a screen or without, and a
    /// valid one beside it does not hide it (found by schemathesis).
    @Test(arguments: [true, false])
    func anInvalidScreenKeyIsRefusedWhereverItIsGiven(fastPaths: Bool) async throws {
        let live = try await LiveService(fastPaths: fastPaths)
        let valid = ("X-Screen-Key", "own-key-0123456789abcdef")
        let cases: [(String, String, [(String, String)])] = [
            ("GET", "/banner?screenKey=short", [("X-Screen-Id", "wall-1"), valid]),
            ("GET", "/banner/index?screenKey=%5BFiltered%5D", []),
            ("GET", "/carousels/default/banner", [("X-Screen-Key", "not a key")]),
            ("POST", "/carousels/default/screens/wall-1/receipts?screenKey=short", [valid]),
        ]
        for (method, path, headers) in cases {
            let refused = try await live.request(
                method, path, headers: headers + [("Content-Type", "application/json")],
                body: method == "POST" ? #"{"receipts": []}"# : nil)
            #expect(refused.status == 400, "\(path)")
            #expect(refused.problemDetail?.contains("16 to 128") == true, "\(refused.text)")
        }
    }

    @Test func screenEventsTellEachChangeOfStateAndAClosedStreamGoesOffline() async throws {
        let live = try await LiveService(fleet: FleetSettings(screenTimeout: .seconds(1)))
        let watcher = try HTTPConnection(port: live.port)
        #expect(try await watcher.openStream("/screens/events").status == 200)
        let events = EventStreamReader(watcher)
        #expect(try await events.nextEvent()?.retry == 2000)
        let screen = try HTTPConnection(port: live.port)
        #expect(try await screen.openStream("/banner/events?screen=wall-1").status == 200)
        func next() async throws -> [String: Any] {
            let event = try #require(try await events.nextEvent())
            #expect(event.event == "screen")
            return try #require(
                try JSONSerialization.jsonObject(with: Data((event.data ?? "").utf8)) as? [String: Any])
        }
        let online = try await next()
        #expect(online["id"] as? String == "wall-1" && online["state"] as? String == "online")
        #expect(online["via"] as? String == "stream")
        screen.hangUp()
        let offline = try await next()
        #expect(offline["id"] as? String == "wall-1" && offline["state"] as? String == "offline")
    }

    @Test func metricsCountScreensByState() async throws {
        let live = try await LiveService(fleet: FleetSettings(screenTimeout: .seconds(3600)))
        #expect(try await live.request("GET", "/banner?screen=wall-1").status == 200)
        #expect(
            try await eventually {
                try await live.request("GET", "/metrics").text.contains(
                    #"banner_screens{carousel="default",state="online"} 1"#)
            })
        let text = try await live.request("GET", "/metrics").text
        #expect(text.contains("# TYPE banner_screen_lateness_seconds histogram"))
        #expect(text.contains(#"banner_screen_transitions_total{to="online"}"#))
    }
}
