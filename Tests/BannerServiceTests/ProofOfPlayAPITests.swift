import Carousel
import Foundation
import TestSupport
import Testing
import TimeZones

/// Views, clicks and stats over the API (docs/STATS.md), against the router and the live service.
@Suite("Proof of play over the API")
struct ProofOfPlayAPITests {
    /// A carousel `shop`: banner `a` links to the shop, `b` has no link.
    static func createShop(_ service: any TestService) async throws {
        let body = #"""
            {"name": "shop", "interval": 3600, "banners": [
              {"id": "a", "image": "https://cdn.example.com/a.png", "link": "https://shop.example.com/spring"},
              {"id": "b", "image": "https://cdn.example.com/b.png"}]}
            """#
        let created = try await service.request(
            "POST", "/carousels", headers: [("Content-Type", "application/json")], body: body)
        #expect(created.status == 201)
    }

    /// The service's own time (`GET /time`): the router's runs on a manual clock.
    static func now(_ service: any TestService) async throws -> Timestamp {
        let millis = try #require(try await service.request("GET", "/time").json["epochMillis"] as? Double)
        // To the millisecond, as views carry it.
        return Timestamp(nanosecondsSinceEpoch: Int64(millis.rounded(.down)) * 1_000_000)
    }

    static func views(
        _ service: any TestService, _ entries: [(String, Timestamp)], contentType: String = "application/json"
    )
        async throws -> HTTPResponse
    {
        let list = entries.map { #"{"banner": "\#($0.0)", "at": "\#($0.1.rfc3339)", "ms": 1500}"# }
        return try await service.request(
            "POST", "/carousels/shop/views", headers: [("Content-Type", contentType)],
            body: #"{"views": [\#(list.joined(separator: ","))]}"#)
    }

    /// Every row of the stats, by banner, summed over the buckets: views and clicks.
    static func totals(_ service: any TestService) async throws -> [String: (views: Int, clicks: Int)] {
        let stats = try await service.request("GET", "/carousels/shop/stats")
        #expect(stats.status == 200)
        var totals: [String: (views: Int, clicks: Int)] = [:]
        for row in try stats.json["rows"] as? [[String: Any]] ?? [] {
            let banner = row["banner"] as? String ?? ""
            totals[banner, default: (0, 0)].views += row["views"] as? Int ?? 0
            totals[banner, default: (0, 0)].clicks += row["clicks"] as? Int ?? 0
        }
        return totals
    }

    @Test(arguments: Transport.allCases)
    func viewsAndClicksAreCountedAndShownInStats(_ transport: Transport) async throws {
        let service = try await transport.start()
        try await Self.createShop(service)
        let now = try await Self.now(service)
        #expect(try await Self.views(service, [("a", now + .seconds(-1)), ("a", now), ("b", now)]).status == 204)
        // sendBeacon's text body, from a page of another origin, is read as JSON too.
        let beacon = try await Self.views(service, [("b", now)], contentType: "text/plain;charset=UTF-8")
        #expect(beacon.status == 204)
        let click = try await service.request("GET", "/carousels/shop/banners/a/click")
        #expect(click.status == 302)
        #expect(click.header("Location") == "https://shop.example.com/spring")
        #expect(click.header("Cache-Control") == "no-store")
        let totals = try await Self.totals(service)
        #expect(totals["a"]?.views == 2 && totals["a"]?.clicks == 1)
        #expect(totals["b"]?.views == 2 && totals["b"]?.clicks == 0)
    }

    /// A screen that lost the answer to a report sends it again (docs/STATS.md): views with ids
    /// count once, whether the repeat comes in the same request, the next one, or after a flush.
    @Test(arguments: Transport.allCases)
    func aViewSentAgainWithItsIDCountsOnce(_ transport: Transport) async throws {
        let service = try await transport.start()
        try await Self.createShop(service)
        let now = try await Self.now(service)
        func send(_ ids: [String]) async throws -> Int {
            let list = ids.map { #"{"banner": "a", "at": "\#(now.rfc3339)", "ms": 1500, "id": "\#($0)"}"# }
            return try await service.request(
                "POST", "/carousels/shop/views", headers: [("Content-Type", "text/plain")],
                body: #"{"views": [\#(list.joined(separator: ","))]}"#
            ).status
        }
        let first = "0b6f9e52-3c1d-4c55-9a3e-7d1f2c8e4a10"
        #expect(try await send([first, first, "view.2_b"]) == 204)
        #expect(try await send([first]) == 204)
        #expect(try await Self.totals(service)["a"]?.views == 2)  // stats flush what was counted
        #expect(try await send(["view.2_b", "view-3"]) == 204)
        #expect(try await Self.totals(service)["a"]?.views == 3)
        for id in ["", String(repeating: "x", count: 65), "a b", "é"] {
            let refused = try await service.request(
                "POST", "/carousels/shop/views", headers: [("Content-Type", "application/json")],
                body: #"""
                    {"views": [{"banner": "a", "at": "\#(now.rfc3339)", "ms": 1},
                               {"banner": "a", "at": "\#(now.rfc3339)", "ms": 1, "id": "\#(id)"}]}
                    """#)
            #expect(refused.status == 400, "\(id)")
            #expect(refused.problemDetail == "field 'views[1].id': must be 1 to 64 of a-z, A-Z, 0-9, '.', '_', '-'")
        }
        let number = try await service.request(
            "POST", "/carousels/shop/views", headers: [("Content-Type", "application/json")],
            body: #"{"views": [{"banner": "a", "at": "\#(now.rfc3339)", "ms": 1, "id": 7}]}"#)
        #expect(number.problemDetail == "field 'views[0].id': must be a string, got a number")
        #expect(try await Self.totals(service)["a"]?.views == 3)
    }

    @Test(arguments: Transport.allCases)
    func aClickOnABannerWithoutALinkOrUnknownIs404AndNotCounted(_ transport: Transport) async throws {
        let service = try await transport.start()
        try await Self.createShop(service)
        let noLink = try await service.request("GET", "/carousels/shop/banners/b/click")
        #expect(noLink.status == 404)
        #expect(noLink.problemDetail == "banner 'b' of carousel 'shop' has no link to go to")
        #expect(try await service.request("GET", "/carousels/shop/banners/zz/click").status == 404)
        #expect(try await service.request("GET", "/carousels/nope/banners/a/click").status == 404)
        #expect(try await service.request("POST", "/carousels/shop/banners/a/click").status == 405)
        #expect(try await Self.totals(service)["b"]?.clicks == 0)
    }

    /// Every refused report names what is wrong and counts none of its views.
    @Test(arguments: Transport.allCases)
    func badViewsAreRefusedWholeAndCountNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        try await Self.createShop(service)
        let now = try await Self.now(service)
        let unknown = try await Self.views(service, [("a", now), ("zz", now)])
        #expect(unknown.status == 422)
        #expect(unknown.problemDetail == "views[1].banner: the carousel has no banner 'zz'")
        let future = try await Self.views(service, [("a", now + .seconds(3600))])
        #expect(future.status == 422)
        #expect(
            future.problemDetail?.hasPrefix("views[0].at: \((now + .seconds(3600)).rfc3339) is in the future") == true)
        let old = try await Self.views(service, [("a", now + .seconds(-86_401))])
        #expect(old.status == 422)
        #expect(old.problemDetail?.contains("is more than a day ago") == true)
        let many = try await Self.views(service, Array(repeating: ("a", now), count: 101))
        #expect(many.status == 413)
        for (body, detail) in [
            (
                #"{"views": [{"banner": "a", "at": "yesterday", "ms": 1}]}"#,
                "field 'views[0].at': 'yesterday' is not an RFC 3339 date-time"
            ),
            (
                #"{"views": [{"banner": "a", "at": "\#(now.rfc3339)"}]}"#,
                "field 'views[0].ms': required field is missing; must be an integer"
            ),
            (
                #"{"views": [{"banner": 1, "at": "\#(now.rfc3339)", "ms": 1}]}"#,
                "field 'views[0].banner': must be a string, got a number"
            ),
            (#"{"views": {}}"#, "field 'views': must be an array, got an object"),
            (#"{"view": []}"#, "field 'view': unknown field; expected one of: views"),
            ("{", nil),
        ] {
            let refused = try await service.request(
                "POST", "/carousels/shop/views", headers: [("Content-Type", "application/json")], body: body)
            #expect(refused.status == 400, "\(body)")
            if let detail { #expect(refused.problemDetail == detail) }
        }
        let image = try await service.request(
            "POST", "/carousels/shop/views", headers: [("Content-Type", "image/png")], body: "{}")
        #expect(image.status == 415)
        #expect(try await Self.totals(service)["a"]?.views == 0)
    }

    @Test(arguments: Transport.allCases)
    func statsAreAskedForByHourOrDayInTheCarouselsTimeZone(_ transport: Transport) async throws {
        let service = try await transport.start()
        try await Self.createShop(service)
        let patched = try await service.request(
            "PATCH", "/carousels/shop", headers: [("Content-Type", "application/json")],
            body: #"{"timeZone": "Asia/Kolkata"}"#)
        #expect(patched.status == 200)
        let now = try await Self.now(service)
        #expect(try await Self.views(service, [("a", now)]).status == 204)
        let days = try await service.request(
            "GET", "/carousels/shop/stats?bucket=day&from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00Z")
        #expect(days.status == 200)
        let json = try days.json
        #expect(json["timeZone"] as? String == "Asia/Kolkata" && json["bucket"] as? String == "day")
        #expect(
            json["from"] as? String == "2026-10-31T18:30:00.000Z" && json["to"] as? String == "2026-11-03T18:30:00.000Z"
        )
        let rows = json["rows"] as? [[String: Any]] ?? []
        #expect(rows.count == 6, "three days, two banners")
        #expect(rows.map { $0["start"] as? String }.first == "2026-10-31T18:30:00.000Z")
        // The default: the last 24 hours by hour, the current hour included.
        let recent = try await service.request("GET", "/carousels/shop/stats").json["rows"] as? [[String: Any]] ?? []
        #expect(recent.count == 2 * 25 || recent.count == 2 * 24)
        #expect(recent.reduce(0) { $0 + ($1["views"] as? Int ?? 0) } == 1)
        // CSV: the same rows.
        let csv = try await service.request("GET", "/carousels/shop/stats", headers: [("Accept", "text/csv")])
        #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(csv.text.split(separator: "\r\n").count == recent.count + 1)
        for (query, status) in [
            ("bucket=week", 400), ("from=soon", 400), ("from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", 422),
            ("from=2020-01-01T00:00:00Z&to=2026-01-01T00:00:00Z", 422),
        ] {
            #expect(try await service.request("GET", "/carousels/shop/stats?\(query)").status == status, "\(query)")
        }
    }

    @Test func statsAreForAdminsWhenAnAdminTokenIsSet() async throws {
        let service = RouterHarness(adminToken: "s3cret")
        #expect(await service.send("GET", "/carousels/default/stats").status == 401)
        let allowed = await service.send(
            "GET", "/carousels/default/stats", headers: [("Authorization", "Bearer s3cret")])
        #expect(allowed.status == 200)
        // Views and clicks are the screens': no token.
        #expect(await service.send("GET", "/carousels/default/banners/b0/click").status == 404)
    }
}
