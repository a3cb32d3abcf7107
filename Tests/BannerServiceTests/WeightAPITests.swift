import Foundation
import TestSupport
import Testing

/// Weights over the API (docs/WEIGHTS.md), each check run against the router and the live services.
@Suite("Weights over the API")
struct WeightAPITests {
    /// a, b and c weighted 5, 1, 1: the cycle is a a b a c a a (smooth weighted round-robin).
    static let shop = #"""
        {"name": "shop", "interval": 3600, "banners": [
          {"id": "a", "image": "https://cdn.example.com/a.png", "weight": 5},
          {"id": "b", "image": "https://cdn.example.com/b.png"},
          {"id": "c", "image": "https://cdn.example.com/c.png", "weight": 1}]}
        """#

    static func send(_ service: any TestService, _ method: String, _ path: String, _ body: String) async throws
        -> HTTPResponse
    {
        try await service.request(method, path, headers: [("Content-Type", "application/json")], body: body)
    }

    @Test(arguments: Transport.eachStore)
    func sharesTimelineAndCommandsFollowTheWeights(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await Self.send(service, "POST", "/carousels", Self.shop).status == 201)

        let listed = try #require(
            try await service.request("GET", "/carousels/shop/banners").json["banners"] as? [[String: Any]])
        #expect(listed.map { $0["share"] as? Double } == [0.7143, 0.1429, 0.1429])
        #expect(listed.map { $0["weight"] as? Int } == [5, nil, nil], "the weight is written unless 1")
        #expect(listed.allSatisfy { $0["active"] as? Bool == true })
        let definition = try await service.request("GET", "/carousels/shop").json
        let banners = try #require(definition["banners"] as? [[String: Any]])
        #expect(banners.map { $0["weight"] as? Int } == [5, nil, nil])

        // From turn 0 (a): a, b, a, c, a, a, then round again; a turn that shows the banner again
        // is no change on screen, so the timeline lists the others.
        let timeline = try await service.request("GET", "/carousels/shop/timeline?limit=6").json
        let entries = try #require(timeline["entries"] as? [[String: Any]])
        #expect(entries.map { $0["banner"] as? String } == ["b", "a", "c", "a", "b", "a"])
        #expect(entries.map { $0["index"] as? Int } == [1, 0, 2, 0, 1, 0])

        let state = try await service.request("GET", "/carousels/shop/banner").json
        #expect(ScheduleAPITests.bannerID(state) == "a" && ScheduleAPITests.bannerID(state, "next") == "a")
        let moved = try await service.request("POST", "/carousels/shop/banner/next").json
        #expect(ScheduleAPITests.bannerID(moved) == "b", "next shows another banner")
        #expect(ScheduleAPITests.bannerID(moved, "next") == "a" && ScheduleAPITests.bannerID(moved, "previous") == "a")
        let back = try await service.request("POST", "/carousels/shop/banner/previous").json
        #expect(ScheduleAPITests.bannerID(back) == "a")

        // Reweighting re-spreads the cycle: b now weighs 2 of 8.
        let patched = try await Self.send(service, "PATCH", "/carousels/shop/banners/b", #"{"weight": 2}"#)
        #expect(patched.status == 200)
        let shares = try #require(
            try await service.request("GET", "/carousels/shop/banners").json["banners"] as? [[String: Any]])
        #expect(shares.map { $0["share"] as? Double } == [0.625, 0.25, 0.125])
    }

    @Test(arguments: Transport.eachStore)
    func badWeightsAreRefusedAndChangeNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await Self.send(service, "POST", "/carousels", Self.shop).status == 201)
        let before = try await service.request("GET", "/carousels/shop").body
        for (body, detail) in [
            (#"{"weight": 0}"#, "weight: 0 is out of range; use a whole number from 1 to 100 (turns per cycle)"),
            (#"{"weight": 101}"#, "weight: 101 is out of range"),
            (#"{"weight": 1.5}"#, "weight: must be an integer, got a number"),
            (#"{"weight": "3"}"#, "weight: must be an integer, got a string"),
        ] {
            let refused = try await Self.send(service, "PATCH", "/carousels/shop/banners/b", body)
            #expect(refused.status == 422, "\(body)")
            #expect(refused.problemDetail?.contains(detail) == true, "\(body): \(refused.problemDetail ?? "")")
        }
        // 101 banners weighing about 100 each: a cycle of 10,099 turns over 101 banners is more
        // work than a definition may ask for.
        let many = (0..<101).map {
            #"{"id": "m\#($0)", "image": "https://cdn.example.com/m.png", "weight": \#($0 == 0 ? 99 : 100)}"#
        }
        let tooLong = try await Self.send(
            service, "PUT", "/carousels/shop", #"{"name": "shop", "banners": [\#(many.joined(separator: ", "))]}"#)
        #expect(tooLong.status == 422)
        #expect(
            tooLong.problemDetail?.hasPrefix(
                "banners: 101 banners with weights adding up to 10099 make a cycle too long to compute") == true,
            "\(tooLong.problemDetail ?? "")")
        #expect(try await service.request("GET", "/carousels/shop").body == before)
    }
}
