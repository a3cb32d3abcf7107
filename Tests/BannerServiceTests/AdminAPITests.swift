import BannerService
import Foundation
import TestSupport
import Testing

@testable import BannerAPI

/// The admin API (docs/API.md, administration), each check run against the router and against
/// the live service.
@Suite("Admin API")
struct AdminAPITests {
    static let lobby = #"""
        {"name": "lobby", "interval": 3600, "banners": [
          {"id": "a", "image": "https://cdn.example.com/a.png", "caption": "A"},
          {"id": "b", "image": "https://cdn.example.com/b.png"},
          {"id": "c", "image": "https://cdn.example.com/c.png", "duration": 30}]}
        """#

    static func create(_ service: any TestService, _ body: String = lobby) async throws -> HTTPResponse {
        try await service.request("POST", "/carousels", headers: [("Content-Type", "application/json")], body: body)
    }

    static func json(
        _ service: any TestService, _ method: String, _ path: String, _ body: String, headers: [(String, String)] = []
    ) async throws -> HTTPResponse {
        try await service.request(method, path, headers: [("Content-Type", "application/json")] + headers, body: body)
    }

    @Test(arguments: Transport.eachStore)
    func aCreatedCarouselIsServedUnderItsName(_ transport: Transport) async throws {
        let service = try await transport.start()
        let created = try await Self.create(service)
        #expect(created.status == 201)
        #expect(created.header("Location") == "/carousels/lobby")
        #expect(try created.json["revision"] as? Int == 1)
        let etag = try #require(created.header("ETag"))
        let definition = try await service.request("GET", "/carousels/lobby")
        #expect(definition.header("ETag") == etag)
        #expect(try definition.json["interval"] as? Double == 3600)
        let state = try await service.request("GET", "/carousels/lobby/banner").json
        #expect((state["banner"] as? [String: Any])?["id"] as? String == "a")
        #expect(state["count"] as? Int == 3)
        let list = try await service.request("GET", "/carousels").json["carousels"] as? [[String: Any]]
        #expect(list?.map { $0["name"] as? String } == ["default", "lobby"])
        #expect(try await Self.create(service).status == 409)
        let moved = try await service.request("POST", "/carousels/lobby/banner/next").json
        #expect(moved["index"] as? Int == 1)
        // The list says what each carousel shows now.
        _ = try await service.request("POST", "/carousels/lobby/banner/pause")
        let lobby = try #require(
            try await service.request("GET", "/carousels").json["carousels"] as? [[String: Any]]
        ).last
        #expect(lobby?["banner"] as? String == "b")
        #expect(lobby?["paused"] as? Bool == true)
        #expect(lobby?["takeover"] as? Bool == false)
        #expect(try await service.request("GET", "/banner").json["index"] as? Int == 0, "default did not move")
    }

    /// `GET /carousels?limit=&after=` pages through the carousels by name (docs/API.md).
    @Test(arguments: Transport.eachStore)
    func theListPagesByName(_ transport: Transport) async throws {
        let service = try await transport.start()
        for name in ["zoo", "lobby", "hall"] {
            #expect(try await Self.create(service, #"{"name": "\#(name)"}"#).status == 201)
        }
        func page(_ query: String) async throws -> (names: [String], next: String?) {
            let listed = try await service.request("GET", "/carousels\(query)").json
            let names = (listed["carousels"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
            return (names, listed["next"] as? String)
        }
        #expect(try await page("") == (["default", "hall", "lobby", "zoo"], nil))
        #expect(try await page("?limit=2") == (["default", "hall"], "hall"))
        #expect(try await page("?limit=2&after=hall") == (["lobby", "zoo"], nil), "the last page says so")
        #expect(try await page("?limit=3&after=h") == (["hall", "lobby", "zoo"], nil))
        #expect(try await page("?after=lobby") == (["zoo"], nil))
        #expect(try await page("?after=zoo") == ([], nil))
        // A carousel deleted between pages does not shift the next one.
        #expect(try await service.request("DELETE", "/carousels/hall").status == 204)
        #expect(try await page("?limit=1&after=hall") == (["lobby"], "lobby"))
        for limit in ["0", "1001", "x", "-1", ""] {
            let refused = try await service.request("GET", "/carousels?limit=\(limit)")
            #expect(refused.status == 400, "limit \(limit)")
            #expect(refused.problemDetail?.contains("limit '\(limit)' is not a whole number from 1 to 1000") == true)
        }
    }

    @Test(arguments: Transport.eachStore)
    func anUnknownCarouselIsA404NamingIt(_ transport: Transport) async throws {
        let service = try await transport.start()
        for (method, path) in [
            ("GET", "/carousels/nope/banner"), ("POST", "/carousels/nope/banner/next"), ("GET", "/carousels/nope"),
            ("DELETE", "/carousels/nope"), ("GET", "/carousels/nope/banner/events"), ("GET", "/carousels/nope/"),
        ] {
            let response = try await service.request(method, path)
            #expect(response.status == 404, "\(method) \(path)")
            #expect(response.problemDetail == "no carousel named 'nope'; GET /carousels lists them")
        }
    }

    @Test(arguments: Transport.eachStore)
    func aStaleIfMatchChangesNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        let first = try #require(try await Self.create(service).header("ETag"))
        let patched = try await Self.json(
            service, "PATCH", "/carousels/lobby", #"{"interval": 5}"#, headers: [("If-Match", first)])
        #expect(patched.status == 200)
        #expect(try patched.json["revision"] as? Int == 2)
        let second = try #require(patched.header("ETag"))
        #expect(second != first)
        let stale = try await Self.json(
            service, "PATCH", "/carousels/lobby", #"{"interval": 7}"#, headers: [("If-Match", first)])
        #expect(stale.status == 412)
        #expect(stale.header("ETag") == second)
        let deleted = try await service.request("DELETE", "/carousels/lobby", headers: [("If-Match", first)])
        #expect(deleted.status == 412)
        let now = try await service.request("GET", "/carousels/lobby").json
        #expect(now["interval"] as? Double == 5 && now["revision"] as? Int == 2)
    }

    @Test(arguments: Transport.eachStore)
    func bannersAreAddedReadChangedAndRemoved(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await Self.create(service)
        let added = try await Self.json(
            service, "POST", "/carousels/lobby/banners?position=1",
            #"{"id": "new", "image": "https://cdn.example.com/n.png"}"#)
        #expect(added.status == 201)
        #expect(added.header("Location") == "/carousels/lobby/banners/new")
        #expect(try await Self.ids(service) == ["a", "new", "b", "c"])
        let duplicate = try await Self.json(
            service, "POST", "/carousels/lobby/banners", #"{"id": "b", "image": "https://cdn.example.com/b.png"}"#)
        #expect(duplicate.status == 409)
        let patched = try await Self.json(service, "PATCH", "/carousels/lobby/banners/new", #"{"caption": "New!"}"#)
        #expect(try patched.json["caption"] as? String == "New!")
        #expect(try await service.request("GET", "/carousels/lobby/banners/new").json["caption"] as? String == "New!")
        let replaced = try await Self.json(
            service, "PUT", "/carousels/lobby/banners/new", #"{"image": "https://cdn.example.com/m.png"}"#)
        #expect(try replaced.json["caption"] as? String == "", "a replacement drops what it leaves out")
        let renamed = try await Self.json(
            service, "PUT", "/carousels/lobby/banners/new", #"{"id": "x", "image": "https://cdn.example.com/m.png"}"#)
        #expect(renamed.status == 422)
        #expect(try await service.request("DELETE", "/carousels/lobby/banners/new").status == 204)
        #expect(try await service.request("GET", "/carousels/lobby/banners/new").status == 404)
        #expect(try await Self.ids(service) == ["a", "b", "c"])
    }

    @Test(arguments: Transport.eachStore)
    func anOrderMustBeAPermutation(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await Self.create(service)
        let reordered = try await Self.json(service, "PUT", "/carousels/lobby/order", #"{"ids": ["c", "a", "b"]}"#)
        #expect(reordered.status == 200)
        #expect(try await Self.ids(service) == ["c", "a", "b"])
        let short = try await Self.json(service, "PUT", "/carousels/lobby/order", #"{"ids": ["c", "a"]}"#)
        #expect(short.status == 422)
        #expect(
            short.problemDetail == "ids: must list each of the 3 banner ids once (a permutation); missing b")
        let twice = try await Self.json(service, "PUT", "/carousels/lobby/order", #"{"ids": ["c", "a", "a"]}"#)
        #expect(twice.status == 422)
        #expect(try await Self.ids(service) == ["c", "a", "b"])
    }

    /// The current banner stays current, its countdown untouched, when it survives an edit.
    @Test(arguments: Transport.eachStore)
    func anEditKeepsTheCurrentBanner(_ transport: Transport) async throws {
        let service = try await transport.start()
        let jumped = try await Self.json(service, "PUT", "/banner/index", #"{"index": 2}"#).json
        let deleted = try await service.request("DELETE", "/carousels/default/banners/b0")
        #expect(deleted.status == 204)
        let state = try await service.request("GET", "/banner").json
        #expect((state["banner"] as? [String: Any])?["id"] as? String == "b2")
        #expect(state["index"] as? Int == 1)
        #expect(state["nextAdvanceAt"] as? String == jumped["nextAdvanceAt"] as? String)
        #expect(state["version"] as? Int == (jumped["version"] as? Int ?? 0) + 1, "an edit is a state change")
    }

    /// Every rule of the configuration file holds for the API, with the same message.
    @Test(arguments: carouselFieldRules + carouselSettingRules)
    func theConfigurationFilesRulesHoldForTheAPI(_ fields: String, _ message: String) async throws {
        let service = RouterHarness()
        let body = #"{"name": "x", "# + fields.dropFirst()
        let created = try await Self.create(service, body)
        #expect(created.status == 422)
        #expect(created.problemDetail == message)
        #expect(try await service.request("GET", "/carousels/x").status == 404)
        let replaced = try await Self.json(service, "PUT", "/carousels/default", fields)
        #expect(replaced.status == 422)
        #expect(replaced.problemDetail == message)
        let patched = try await Self.json(service, "PATCH", "/carousels/default", fields)
        #expect(patched.problemDetail == message)
        #expect(try await service.request("GET", "/carousels/default").json["revision"] as? Int == 1)
    }

    @Test(arguments: Transport.allCases)
    func aCarouselDeletedIsGoneAndItsStreamsEnd(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await Self.create(service)
        #expect(try await service.request("DELETE", "/carousels/lobby").status == 204)
        #expect(try await service.request("GET", "/carousels/lobby/banner").status == 404)
        #expect(try await Self.create(service).status == 201, "the name is free again")
    }

    /// Ten editors send a change based on the same revision at once: one wins, nine are told
    /// someone else changed it, and the carousel holds the winner's change only.
    @Test func concurrentWritesWithTheSameIfMatchHaveOneWinner() async throws {
        let live = try await LiveService()
        let etag = try #require(try await Self.create(live).header("ETag"))
        let statuses = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for editor in 1...10 {
                group.addTask {
                    let response = try await Self.json(
                        live, "PATCH", "/carousels/lobby", #"{"interval": \#(editor)}"#, headers: [("If-Match", etag)])
                    return (editor, response.status)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        let winners = statuses.filter { $0.value == 200 }.map(\.key)
        #expect(winners.count == 1)
        #expect(statuses.values.filter { $0 == 412 }.count == 9)
        let stored = try await live.request("GET", "/carousels/lobby").json
        #expect(stored["interval"] as? Double == Double(winners.first ?? 0))
        #expect(stored["revision"] as? Int == 2)
    }

    static func ids(_ service: any TestService) async throws -> [String] {
        let banners = try await service.request("GET", "/carousels/lobby").json["banners"] as? [[String: Any]]
        return banners?.compactMap { $0["id"] as? String } ?? []
    }
}

@Suite("Roles")
struct RoleTests {
    @Test func withoutAnAdminTokenAdminIsForThisHostOnly() async throws {
        let harness = RouterHarness()
        let remote = await harness.send("DELETE", "/carousels/default", fromLoopback: false)
        #expect(remote.status == 403)
        #expect(
            remote.problemDetail
                == "admin requests are accepted from this host only while no admin token is set; set "
                + "CAROUSEL_ADMIN_TOKEN (or CAROUSEL_ADMIN_TOKEN_FILE) on the service and send Authorization: Bearer <token>"
        )
        let proxied = await harness.send("DELETE", "/carousels/default", headers: [("X-Forwarded-For", "203.0.113.9")])
        #expect(proxied.status == 403, "a proxy on this host makes every client look local")
        #expect(await harness.send("GET", "/carousels/default", fromLoopback: false).status == 200, "reads are public")
        #expect(await harness.send("DELETE", "/carousels/default").status == 204)
    }

    @Test func theAdminTokenIsNeededForAdminAndGrantsControl() async throws {
        let harness = RouterHarness(token: "control-token", adminToken: "admin-token")
        let admin = [("Authorization", "Bearer admin-token")]
        let control = [("Authorization", "Bearer control-token")]
        #expect(await harness.send("DELETE", "/carousels/default").status == 401, "loopback is not enough")
        let lower = await harness.send("DELETE", "/carousels/default", headers: control)
        #expect(lower.status == 403, "a token the service knows, of a lower role")
        #expect(
            lower.problemDetail
                == "the control token (CAROUSEL_CONTROL_TOKEN) grants commands only; this request needs the admin "
                + "role: send Authorization: Bearer <CAROUSEL_ADMIN_TOKEN> or a named admin token")
        #expect(await harness.send("POST", "/banner/next", headers: admin).status == 200)
        #expect(await harness.send("POST", "/banner/next", headers: control).status == 200)
        #expect(
            await harness.send("DELETE", "/carousels/default", headers: admin, fromLoopback: false).status == 204)
    }

    /// Without an admin token a loopback peer is trusted only when it names this host: a DNS
    /// name an attacker rebound to 127.0.0.1 reaches this host with its own name in Host.
    @Test(arguments: [
        ("localhost", true), ("localhost:8080", true), ("LocalHost:1", true), ("127.0.0.1", true),
        ("127.0.0.1:65535", true), ("[::1]", true), ("[::1]:8080", true), ("evil.example", false),
        ("evil.example:8080", false), ("127.0.0.2", false), ("localhost.evil.example", false), ("localhost:", false),
        ("localhost:80:80", false), ("[::1]x", false), ("", false),
    ])
    func withoutAnAdminTokenTheRequestMustNameThisHost(_ host: String, _ trusted: Bool) async {
        let harness = RouterHarness()
        let response = await harness.send("DELETE", "/carousels/default", headers: [("Host", host)])
        #expect(response.status == (trusted ? 204 : 403))
        if !trusted {
            #expect(response.problemDetail?.contains("must name this host") == true)
            #expect(await harness.send("GET", "/carousels/default").status == 200, "nothing was deleted")
        }
    }

    /// A page of another origin open in a browser on this host is not this host's operator.
    @Test(arguments: [
        ([("Origin", "http://evil.example")], false), ([("Origin", "null")], false),
        ([("Origin", "http://localhost:3000")], false), ([("Sec-Fetch-Site", "cross-site")], false),
        ([("Origin", "http://localhost:8080")], true), ([("Origin", "https://localhost:8080")], true),
        ([("Sec-Fetch-Site", "same-origin")], true), ([("Sec-Fetch-Site", "none")], true),
    ])
    func withoutAnAdminTokenAPageOfAnotherOriginIsRefused(_ headers: [(String, String)], _ trusted: Bool) async {
        let harness = RouterHarness()
        let response = await harness.sendJSON(
            "POST", "/carousels/default/takeover", #"{"banner": "b1"}"#,
            headers: [("Host", "localhost:8080")] + headers)
        #expect(response.status == (trusted ? 200 : 403), "\(headers)")
        let state = await harness.send("GET", "/banner")
        #expect(((try? state.json)?["takeover"] is NSNull) == !trusted)
    }

    /// The attacks as a browser would send them, over HTTP: a cross-origin form post without a
    /// JSON type, and a rebound DNS name. Nothing changes.
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func crossOriginAndReboundWritesChangeNothing(_ transport: Transport) async throws {
        let live = try await transport.start()
        let before = try await live.request("GET", "/carousels").body
        let create = #"{"name": "evil", "banners": [{"id": "a", "image": "https://evil.example/a.png"}]}"#
        let formPost = try await live.request(
            "POST", "/carousels", headers: [("Origin", "http://evil.example")], body: create)
        #expect(formPost.status == 403)
        let untyped = try await live.request("POST", "/carousels", headers: [], body: create)
        #expect(untyped.status == 415)
        let crossOrigin = try await live.request(
            "POST", "/carousels/default/takeover",
            headers: [("Origin", "http://evil.example"), ("Content-Type", "application/json")],
            body: #"{"banner": {"id": "x", "image": "https://evil.example/x.png"}}"#)
        #expect(crossOrigin.status == 403)
        let rebound = try await live.request(
            "POST", "/carousels", headers: [("Host", "evil.example"), ("Content-Type", "application/json")],
            body: create)
        #expect(rebound.status == 403)
        #expect(try await live.request("GET", "/carousels").body == before)
        #expect(try await live.request("GET", "/banner").json["takeover"] is NSNull)
    }

    @Test func aLiveRemoteLookingRequestIsRefused() async throws {
        let live = try await LiveService()
        let response = try await live.request(
            "DELETE", "/carousels/default", headers: [("Forwarded", "for=203.0.113.9")])
        #expect(response.status == 403)
        #expect(try await live.request("DELETE", "/carousels/default").status == 204, "127.0.0.1 is this host")
    }
}

@Suite("Admin changes are pushed")
struct AdminEventTests {
    @Test func subscribersOfACarouselAreToldOfItsEditsAndItsEnd() async throws {
        let live = try await LiveService()
        _ = try await AdminAPITests.create(live)
        let connection = try HTTPConnection(port: live.port)
        let head = try await connection.openStream("/carousels/lobby/banner/events")
        #expect(head.status == 200)
        let reader = EventStreamReader(connection)
        let first = try stateOf(try await reader.nextEvent())
        _ = try await AdminAPITests.json(live, "PATCH", "/carousels/lobby", #"{"interval": 1800}"#)
        let edited = try stateOf(try await reader.nextEvent())
        #expect(edited["version"] as? Int == (first["version"] as? Int ?? 0) + 1)
        #expect(edited["interval"] as? Double == 1800)
        #expect(try await live.request("DELETE", "/carousels/lobby").status == 204)
        #expect(try await reader.nextEvent() == nil, "the stream ends with its carousel")
    }
}
