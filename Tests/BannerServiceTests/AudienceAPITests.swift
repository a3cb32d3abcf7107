import CarouselRuntime
import Foundation
import TestSupport
import Testing
import TimeZones

/// Audiences over the API (docs/AUDIENCES.md), each check run against the router and the live
/// services.
@Suite("Audiences over the API")
struct AudienceAPITests {
    /// a for everyone, b for de, c for fr, d for de and store-berlin; an hour each.
    static let shop = #"""
        {"name": "shop", "interval": 3600, "banners": [
          {"id": "a", "image": "https://cdn.example.com/a.png"},
          {"id": "b", "image": "https://cdn.example.com/b.png", "audiences": ["de"]},
          {"id": "c", "image": "https://cdn.example.com/c.png", "audiences": ["fr"]},
          {"id": "d", "image": "https://cdn.example.com/d.png", "audiences": ["de", "store-berlin"]}]}
        """#

    static func shown(_ service: any TestService, _ audience: String?) async throws -> String? {
        let query = audience.map { "?audience=\($0)" } ?? ""
        return ScheduleAPITests.bannerID(try await service.request("GET", "/carousels/shop/banner\(query)").json)
    }

    @Test(arguments: Transport.allCases)
    func eachAudienceHasItsStateAndCommandsMoveThemAll(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await WeightAPITests.send(service, "POST", "/carousels", Self.shop).status == 201)
        let definition = try await service.request("GET", "/carousels/shop").json
        let banners = try #require(definition["banners"] as? [[String: Any]])
        #expect(banners.map { $0["audiences"] as? [String] } == [nil, ["de"], ["fr"], ["de", "store-berlin"]])

        let plain = try await service.request("GET", "/carousels/shop/banner")
        let german = try await service.request("GET", "/carousels/shop/banner?audience=de")
        #expect(try plain.json["count"] as? Int == 1, "screens declaring no audience: the banners meant for all")
        #expect(try german.json["count"] as? Int == 3)
        let plainTag = try #require(plain.header("ETag"))
        let germanTag = try #require(german.header("ETag"))
        #expect(plainTag != germanTag, "each audience its own ETag")
        let unnamed = try await service.request("GET", "/carousels/shop/banner?audience=it")
        #expect(unnamed.body == plain.body && unnamed.header("ETag") == plainTag, "an audience no banner names")
        let again = try await service.request(
            "GET", "/carousels/shop/banner?audience=de", headers: [("If-None-Match", germanTag)])
        #expect(again.status == 304)

        // next moves every audience; the answer is the requester's audience's state.
        let moved = try await service.request("POST", "/carousels/shop/banner/next?audience=fr")
        #expect(moved.status == 200)
        #expect(try ScheduleAPITests.bannerID(moved.json) == "c")
        #expect(try await Self.shown(service, "de") == "b")
        #expect(try await Self.shown(service, "store-berlin") == "d")
        #expect(try await Self.shown(service, nil) == "a")
        let changed = try await service.request(
            "GET", "/carousels/shop/banner?audience=de", headers: [("If-None-Match", germanTag)])
        #expect(changed.status == 200 && changed.header("ETag") != germanTag)
        #expect(
            try await service.request("GET", "/carousels/shop/banner", headers: [("If-None-Match", plainTag)]).status
                == 304, "nothing else to show: the default state did not change")

        // A jump goes to a banner of the requester's audience, wherever that banner rotates.
        let jumped = try await WeightAPITests.send(
            service, "PUT", "/carousels/shop/banner/index?audience=de", #"{"index": 0}"#)
        #expect(jumped.status == 200)
        #expect(try ScheduleAPITests.bannerID(jumped.json) == "a")
        #expect(try await Self.shown(service, "fr") == "a")
        #expect(try await Self.shown(service, "store-berlin") == "a")
        let outOfRange = try await WeightAPITests.send(
            service, "PUT", "/carousels/shop/banner/index?audience=store-berlin", #"{"index": 2}"#)
        #expect(outOfRange.status == 422)
        #expect(outOfRange.problemDetail?.contains("there are 2 banners") == true, "\(outOfRange.problemDetail ?? "")")

        // The timeline of an audience: de's rotation is a b d, from a.
        let timeline = try await service.request("GET", "/carousels/shop/timeline?audience=de&limit=3").json
        let entries = try #require(timeline["entries"] as? [[String: Any]])
        #expect(entries.map { $0["banner"] as? String } == ["b", "d", "a"])
    }

    /// The admin page's preview: what a screen of an audience will show at an instant.
    @Test(arguments: Transport.allCases)
    func thePreviewShowsAnAudiencesStateAtAnInstant(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await WeightAPITests.send(service, "POST", "/carousels", Self.shop).status == 201)
        let millis = try #require(try await service.request("GET", "/time").json["epochMillis"] as? Double)
        let formatter = ISO8601DateFormatter()
        func instant(hoursFromNow hours: Double) -> String {
            formatter.string(from: Date(timeIntervalSince1970: millis / 1000 + hours * 3600))
        }
        let now = try await service.request("GET", "/carousels/shop/banner?audience=de").json
        // An hour each: in 2.5 hours de (a b d) is two advances on, at d.
        let later = try await service.request(
            "GET", "/carousels/shop/preview?audience=de&at=\(instant(hoursFromNow: 2.5))")
        #expect(later.status == 200)
        #expect(try ScheduleAPITests.bannerID(later.json) == "d")
        #expect(try later.json["version"] as? Int == (now["version"] as? Int ?? 0) + 2)
        let plain = try await service.request("GET", "/carousels/shop/preview?at=\(instant(hoursFromNow: 2.5))")
        #expect(try ScheduleAPITests.bannerID(plain.json) == "a", "no audience: a alone")
        let unchanged = try await service.request("GET", "/carousels/shop/banner?audience=de").json
        #expect(unchanged["version"] as? Int == now["version"] as? Int, "a preview changes nothing")
        for (query, status, detail) in [
            ("", 400, "at: missing"),
            ("?at=tomorrow", 400, "at 'tomorrow' is not an RFC 3339 date-time"),
            ("?at=\(instant(hoursFromNow: -1))", 422, "is not between now"),
            ("?at=\(instant(hoursFromNow: 3 * 366 * 24))", 422, "two years ahead"),
            ("?audience=DE&at=\(instant(hoursFromNow: 1))", 400, "audience 'DE' is invalid"),
        ] {
            let refused = try await service.request("GET", "/carousels/shop/preview\(query)")
            #expect(refused.status == status, "\(query)")
            #expect(refused.problemDetail?.contains(detail) == true, "\(query): \(refused.problemDetail ?? "")")
        }
    }

    /// Stats by audience (docs/STATS.md): views, clicks and plays of de's screens apart from those
    /// of screens of no audience, each with its own banners and planned shares; screens of an
    /// audience no banner names count with those of no audience.
    @Test(arguments: Transport.allCases)
    func statsAreKeptPerAudience(_ transport: Transport) async throws {
        let service = try await transport.start()
        let shop = Self.shop.replacingOccurrences(
            of: #""id": "b", "image": "https://cdn.example.com/b.png""#,
            with: #""id": "b", "image": "https://cdn.example.com/b.png", "link": "https://shop.example.com/b""#)
        #expect(try await WeightAPITests.send(service, "POST", "/carousels", shop).status == 201)
        let now = try await ProofOfPlayAPITests.now(service)
        func report(_ query: String, _ banners: [String]) async throws -> Int {
            let list = banners.map { #"{"banner": "\#($0)", "at": "\#(now.rfc3339)", "ms": 1500}"# }
            return try await WeightAPITests.send(
                service, "POST", "/carousels/shop/views\(query)", #"{"views": [\#(list.joined(separator: ","))]}"#
            ).status
        }
        #expect(try await report("?audience=de", ["a", "b", "b"]) == 204)
        #expect(try await report("", ["a"]) == 204)
        #expect(try await report("?audience=it", ["a"]) == 204, "it: no banner names it, counted as no audience")
        #expect(try await service.request("GET", "/carousels/shop/banners/b/click?audience=de").status == 302)
        /// Each banner's row, summed over the buckets.
        func rows(_ query: String) async throws -> [String: [String: Any]] {
            let stats = try await service.request("GET", "/carousels/shop/stats\(query)")
            #expect(stats.status == 200, "\(query)")
            var rows: [String: [String: Any]] = [:]
            for row in try stats.json["rows"] as? [[String: Any]] ?? [] {
                let banner = row["banner"] as? String ?? ""
                var sum = rows[banner] ?? ["views": 0, "clicks": 0, "plays": 0]
                for field in ["views", "clicks", "plays"] {
                    sum[field] = (sum[field] as? Int ?? 0) + (row[field] as? Int ?? 0)
                }
                sum["plannedShare"] = row["plannedShare"]
                rows[banner] = sum
            }
            return rows
        }
        let de = try await rows("?audience=de")
        #expect(Set(de.keys) == ["a", "b", "d"], "de's banners")
        #expect(de["a"]?["views"] as? Int == 1 && de["b"]?["views"] as? Int == 2 && de["b"]?["clicks"] as? Int == 1)
        #expect(de["a"]?["plays"] as? Int == 1, "de's screens have played a since the carousel began")
        #expect(de["b"]?["plannedShare"] as? Double == 0.3333)
        let none = try await rows("")
        #expect(Set(none.keys) == ["a"], "screens of no audience: the banners meant for all")
        #expect(none["a"]?["views"] as? Int == 2 && none["a"]?["clicks"] as? Int == 0)
        #expect(none["a"]?["plannedShare"] as? Double == 1)
        let fr = try await rows("?audience=fr")
        #expect(fr["c"]?["views"] as? Int == 0 && fr["a"]?["views"] as? Int == 0)
        let answer = try await service.request("GET", "/carousels/shop/stats?audience=de").json
        #expect(answer["audience"] as? String == "de")
        for path in ["/carousels/shop/stats?audience=DE", "/carousels/shop/banners/b/click?audience=-"] {
            #expect(try await service.request("GET", path).status == 400, "\(path)")
        }
        #expect(try await report("?audience=de%20x", ["a"]) == 400)
        #expect(try await rows("?audience=de")["a"]?["views"] as? Int == 1, "refused requests counted nothing")
    }

    @Test(arguments: Transport.allCases)
    func badAudienceNamesAre400AndChangeNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await WeightAPITests.send(service, "POST", "/carousels", Self.shop).status == 201)
        let before = try await service.request("GET", "/carousels/shop/banner?audience=de").body
        for (method, path) in [
            ("GET", "/carousels/shop/banner?audience=Store%20Berlin"),
            ("GET", "/carousels/shop/banners?audience=-de"),
            ("GET", "/carousels/shop/timeline?audience=DE"),
            ("GET", "/carousels/shop/banner/events?audience=%C3%A9"),
            ("POST", "/carousels/shop/banner/next?audience=de!"),
            ("GET", "/carousels/shop/banner?audience="),
        ] {
            let refused = try await service.request(method, path)
            #expect(refused.status == 400, "\(method) \(path)")
            #expect(refused.problemDetail?.contains("is invalid: an audience is 1 to 64 of a-z") == true, "\(path)")
        }
        // A screen id and an audience both invalid: the screen's 400, on reads and streams alike.
        for path in ["/carousels/shop/banner", "/carousels/shop/banner/events"] {
            let refused = try await service.request("GET", path + "?audience=DE&screen=Lobby")
            #expect(refused.status == 400, "\(path)")
            #expect(refused.problemDetail?.contains("screen: screen id 'Lobby' is invalid") == true, "\(path)")
        }
        #expect(try await service.request("GET", "/carousels/shop/banner?audience=de").body == before)
        // 62 more beside de, fr and store-berlin.
        let tooMany = (0..<62).map { "\"a\($0)\"" }.joined(separator: ", ")
        let refused = try await WeightAPITests.send(
            service, "PATCH", "/carousels/shop/banners/a", #"{"audiences": [\#(tooMany)]}"#)
        #expect(refused.status == 422)
        #expect(
            refused.problemDetail?.contains("the banners name 65 audiences") == true, "\(refused.problemDetail ?? "")")
    }

    /// A screen of an audience reports its receipts with `?audience=`: they are checked and judged
    /// against its audience's state, whose versions and banners are its own.
    @Test func aScreenOfAnAudienceIsJudgedByItsAudiencesState() async throws {
        let live = try await LiveService(fleet: FleetSettings(screenTimeout: .seconds(3600)))
        #expect(try await WeightAPITests.send(live, "POST", "/carousels", Self.shop).status == 201)
        #expect(try await live.request("POST", "/carousels/shop/banner/next").status == 200)
        let german = try await live.request("GET", "/carousels/shop/banner?audience=de").json
        let version = try #require(german["version"] as? Int)
        #expect(try await live.request("GET", "/carousels/shop/banner").json["version"] as? Int == 1)
        let receipt = ScreensAPITests.receipts(
            #"{"version": \#(version), "banner": "b", "shownAt": "\#(Timestamp.now().rfc3339)"}"#)
        let path = "/carousels/shop/screens/wall-de/receipts"
        let asNoAudience = try await WeightAPITests.send(live, "POST", path, receipt)
        #expect(asNoAudience.status == 422, "version \(version) is past the state of screens of no audience")
        #expect(try await WeightAPITests.send(live, "POST", path + "?audience=de", receipt).status == 204)
        var listed: [String: [String: Any]] = [:]
        #expect(
            try await eventually {
                listed = try await ScreensAPITests.screens(live)
                return listed["wall-de"]?["shown"] is [String: Any]
            })
        let shown = try #require(listed["wall-de"]?["shown"] as? [String: Any])
        #expect(shown["banner"] as? String == "b" && shown["version"] as? Int == version)
        #expect(listed["wall-de"]?["reason"] as? String != "wrong-banner", "b is what de's screens showed")
        #expect(listed["wall-de"]?["audience"] as? String == "de")
        // A poll of a screen of no audience; the list by audience.
        #expect(try await live.request("GET", "/carousels/shop/banner?screen=wall").status == 200)
        #expect(try await eventually { try await ScreensAPITests.screens(live)["wall"] != nil })
        #expect(try await ScreensAPITests.screens(live)["wall"]?["audience"] is NSNull)
        #expect(try await Array(ScreensAPITests.screens(live, path: "/screens?audience=de").keys) == ["wall-de"])
        #expect(
            try await Array(ScreensAPITests.screens(live, path: "/carousels/shop/screens?audience=de").keys)
                == ["wall-de"])
        #expect(try await ScreensAPITests.screens(live, path: "/screens?audience=fr").isEmpty)
        #expect(try await live.request("GET", "/screens?audience=DE").status == 400)
    }

    /// Each audience's screens hear of their own changes only; an audience an edit names for the
    /// first time is followed by the screens that declared it.
    @Test func eachAudienceHasItsOwnStream() async throws {
        let live = try await LiveService()
        #expect(try await WeightAPITests.send(live, "POST", "/carousels", Self.shop).status == 201)
        func open(_ query: String) async throws -> EventStreamReader {
            let connection = try HTTPConnection(port: live.port)
            #expect(try await connection.openStream("/carousels/shop/banner/events\(query)").status == 200)
            return EventStreamReader(connection)
        }
        let german = try await open("?audience=de")
        let italian = try await open("?audience=it")
        let plain = try await open("")
        let firstGerman = try stateOf(try await german.nextEvent())
        let firstItalian = try stateOf(try await italian.nextEvent())
        let firstPlain = try stateOf(try await plain.nextEvent())
        #expect(firstGerman["count"] as? Int == 3 && firstItalian["count"] as? Int == 1)

        _ = try await live.request("POST", "/carousels/shop/banner/next")
        let movedGerman = try stateOf(try await german.nextEvent())
        #expect(ScheduleAPITests.bannerID(movedGerman) == "b")
        #expect(movedGerman["version"] as? Int == (firstGerman["version"] as? Int ?? 0) + 1)

        // c becomes Italy's too: the edit changes every state, and it's screens now see their own.
        let patched = try await WeightAPITests.send(
            live, "PATCH", "/carousels/shop/banners/c", #"{"audiences": ["fr", "it"]}"#)
        #expect(patched.status == 200)
        let editedGerman = try stateOf(try await german.nextEvent())
        #expect(editedGerman["version"] as? Int == (movedGerman["version"] as? Int ?? 0) + 1)
        let nowItalian = try stateOf(try await italian.nextEvent())
        #expect(nowItalian["count"] as? Int == 2, "a and c")
        #expect((nowItalian["version"] as? Int ?? 0) > (firstItalian["version"] as? Int ?? 0))
        let editedPlain = try stateOf(try await plain.nextEvent())
        #expect(editedPlain["version"] as? Int == (firstPlain["version"] as? Int ?? 0) + 1, "next moved nothing here")
        #expect(try await Self.shown(live, "it") == ScheduleAPITests.bannerID(nowItalian))
    }
}
