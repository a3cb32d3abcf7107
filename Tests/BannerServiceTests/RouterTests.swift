import Carousel
import Foundation
import JSON
import Logging
import MicroHTTP
import Testing
import TimeZones

@testable import BannerAPI
@testable import BannerService

@Suite("Routes and reads")
struct RouterReadTests {
    @Test func theStateDocumentHasEveryFieldInOrder() async {
        let harness = RouterHarness(banners: 3)
        let response = await harness.send("GET", "/banner")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(
            response.text == """
                {"index":0,"count":3,\
                "banner":{"id":"b0","image":"https://cdn.example.com/0.png","caption":"Banner 0","link":null,"duration":null},\
                "previous":{"id":"b2","image":"https://cdn.example.com/2.png","caption":"Banner 2","link":null,"duration":null},\
                "next":{"id":"b1","image":"https://cdn.example.com/1.png","caption":"Banner 1","link":null,"duration":null},\
                "paused":false,"pausedUntil":null,"interval":4.0,"nextAdvanceAt":"2026-11-29T20:00:04.000Z","version":1,\
                "rotation":["b0","b1","b2"],"takeover":null}

                """)
    }

    @Test func bannersListsEveryBannerWithCountAndVersion() async throws {
        let response = await RouterHarness().send("GET", "/banners")
        let json = try response.json
        #expect((json["banners"] as? [[String: Any]])?.map { $0["id"] as? String } == ["b0", "b1", "b2", "b3", "b4"])
        #expect(json["count"] as? Int == 5)
        #expect(json["version"] as? Int == 1)
    }

    @Test func indexAnswersIndexAndCount() async {
        #expect(await RouterHarness().send("GET", "/banner/index").text == "{\"index\":0,\"count\":5}\n")
    }

    @Test func healthz() async {
        let response = await RouterHarness().send("GET", "/healthz")
        #expect(response.status == 200)
        #expect(response.text == "{\"status\":\"ok\"}\n")
        #expect(response.header("Cache-Control") == "no-store", "no validator to revalidate a cached copy with")
    }

    /// The carousels' clock to the microsecond, never cached: screens estimate their offset to it.
    @Test func timeIsTheCarouselsClockInMilliseconds() async throws {
        let harness = RouterHarness()
        harness.clock.set(t0 + .nanoseconds(123_456_789))
        let response = await harness.send("GET", "/time")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        #expect(response.header("Cache-Control") == "no-store")
        #expect(response.header("Timing-Allow-Origin") == "*", "pages time the exchange by their network stack")
        #expect(response.text == "{\"epochMillis\":1795982400123.456}\n")
        harness.clock.set(t0 + .nanoseconds(7_000))
        #expect(await harness.send("GET", "/time").text == "{\"epochMillis\":1795982400000.007}\n")
    }

    @Test(arguments: ["/banner", "/banners", "/banner/index", "/healthz", "/time"])
    func headIsAllowedWhereGetIs(_ path: String) async {
        #expect(await RouterHarness().send("HEAD", path).status == 200)
    }

    @Test func anUnknownPathIs404() async throws {
        let response = await RouterHarness().send("GET", "/nope")
        #expect(response.status == 404)
        #expect(response.header("Content-Type") == "application/problem+json")
        let json = try response.json
        #expect(json["type"] as? String == "about:blank")
        #expect(json["title"] as? String == "Not Found")
        #expect(json["status"] as? Int == 404)
        #expect(json["detail"] as? String == "no route for GET /nope")
    }

    /// A carousel's paths, the edges of their segments included: an empty name or id, or one with
    /// a `/` in it, is no route (404 saying so), where a path with a route answers anything else.
    @Test(arguments: [
        ("/carousels/default/banner", true), ("/carousels/default/banners/b1", true),
        ("/carousels/default/banners/b1/click", true), ("/carousels/default/screens/wall-1/receipts", true),
        ("/carousels/nope/banner", true), ("/carousels", true), ("/carousels/default/screens", true),
        ("/carousels//banner", false), ("/carousels/", false), ("/carousels/default/banners/", false),
        ("/carousels/default/banners/b1/x", false), ("/carousels/default/banners//click", false),
        ("/carousels/default/banners/b1/click/", false), ("/carousels/default/screens/receipts", true),
        ("/carousels/default/screens/a/receipts/x", false),
        ("/carousels/default/screens//receipts", false), ("/carousels/default/screens/a/b/receipts", false),
    ])
    func aCarouselsPathLeadsWhereItSays(_ path: String, _ routed: Bool) async {
        let response = await RouterHarness().send("GET", path)
        #expect((response.problemDetail != "no route for GET \(path)") == routed, "\(response.status)")
    }

    /// `hours` without `limit` lifts the default of 100 to all a timeline gives; `until` then says
    /// where the list stopped.
    @Test func aDayOfTheTimelineIsAsLongAsATimelineGives() async throws {
        let day = await RouterHarness(interval: .seconds(4)).send("GET", "/carousels/default/timeline?hours=24")
        let entries = try #require(try day.json["entries"] as? [[String: Any]])
        #expect(entries.count == 10_000, "24 h of 4 s changes are 21,600")
        #expect(try day.json["until"] as? String == entries.last?["at"] as? String)
    }

    @Test(arguments: [
        ("DELETE", "/banner", "GET, HEAD"), ("POST", "/banner", "GET, HEAD"), ("PUT", "/banners", "GET, HEAD"),
        ("POST", "/banner/index", "GET, HEAD, PUT"), ("GET", "/banner/next", "POST"),
        ("GET", "/banner/previous", "POST"), ("HEAD", "/banner/pause", "POST"), ("PUT", "/banner/resume", "POST"),
        ("POST", "/healthz", "GET, HEAD"),
    ])
    func aWrongMethodIs405WithAllow(_ method: String, _ path: String, _ allow: String) async {
        let response = await RouterHarness().send(method, path)
        #expect(response.status == 405)
        #expect(response.header("Allow") == allow)
        #expect(response.problemDetail == "\(path) does not allow \(method); allowed: \(allow)")
    }

    @Test(arguments: ["/banner", "/banners", "/banner/index"])
    func readsQueueOneResponseBuiltPerStateVersion(_ path: String) async throws {
        let harness = RouterHarness()
        func prepared() throws -> PreparedResponse {
            guard case .prepared(let response) = harness.api.respond(to: Request(method: "GET", path: path)) else {
                throw Problem(status: 500, detail: "\(path) was not answered with a prepared response")
            }
            return response
        }
        let first = try prepared()
        #expect(try prepared() === first, "the same response object, not a new one per request")
        _ = await harness.send("POST", "/banner/next")
        let afterCommand = try prepared()
        #expect(afterCommand !== first)
        #expect(try prepared() === afterCommand)
    }

    /// The published state's bytes, with the request's id (docs/AUDIT.md) after its headers.
    @Test func aCommandAnswersWithThePublishedStateAndItsRequestID() async throws {
        let harness = RouterHarness()
        let request = Request(
            method: "POST", path: "/banner/next", headers: [HTTPHeader("X-Request-Id", "req 42/<x>")])
        guard case .deferred(let work, _) = harness.api.respond(to: request) else {
            Issue.record("a command is deferred")
            return
        }
        let answer = await work()
        let published = harness.reads.response(.state, origin: nil, ifNoneMatch: nil)
        #expect(answer.status == 200)
        #expect(answer.body == published.body)
        #expect(answer.headers == published.headers + [HTTPHeader("X-Request-Id", "req42x")])
    }

    @Test func aCompletedCommandIsVisibleToTheNextRead() async throws {
        let harness = RouterHarness()
        let command = try await harness.send("POST", "/banner/next").json
        let read = try await harness.send("GET", "/banner").json
        #expect(read["version"] as? Int == command["version"] as? Int)
        #expect(read["index"] as? Int == 1)
        #expect(await harness.send("GET", "/banner/index").text == "{\"index\":1,\"count\":5}\n")
    }
}

@Suite("Commands")
struct RouterCommandTests {
    /// Commands sent together are written together (group commit), yet each is answered with the
    /// state it left: one version each, none skipped, none twice.
    @Test(arguments: Transport.allCases)
    func concurrentCommandsEachGetTheirOwnState(_ transport: Transport) async throws {
        let service = try await transport.start()
        let start = try await service.request("GET", "/banner").json["version"] as? Int ?? 0
        let versions = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<40 {
                group.addTask {
                    let answer = try await service.request("POST", "/banner/next")
                    return try answer.status == 200 ? answer.json["version"] as? Int ?? -1 : -answer.status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }.sorted()
        }
        #expect(versions == Array(start + 1...start + 40))
        #expect(try await service.request("GET", "/banner").json["version"] as? Int == start + 40)
    }

    @Test func nextAndPreviousMoveAndAnswerTheState() async throws {
        let harness = RouterHarness()
        harness.clock.set(t0 + .seconds(1))
        let next = try await harness.send("POST", "/banner/next").json
        #expect(next["index"] as? Int == 1)
        #expect(next["nextAdvanceAt"] as? String == "2026-11-29T20:00:05.000Z")
        #expect(next["version"] as? Int == 2)
        let previous = try await harness.send("POST", "/banner/previous").json
        #expect(previous["index"] as? Int == 0)
        let wrapped = try await harness.send("POST", "/banner/previous").json
        #expect(wrapped["index"] as? Int == 4)
    }

    @Test func putIndexJumps() async throws {
        let response = await RouterHarness().sendJSON("PUT", "/banner/index", #"{"index": 3}"#)
        #expect(response.status == 200)
        #expect(try response.json["index"] as? Int == 3)
    }

    /// JSON Schema counts 2.0 as an integer, so the OpenAPI document's clients may send it.
    @Test(arguments: ["2.0", "2e0", "0.2e1"])
    func anIntegralIndexInAnyNotationJumps(_ literal: String) async throws {
        let response = await RouterHarness().sendJSON("PUT", "/banner/index", #"{"index": \#(literal)}"#)
        #expect(response.status == 200)
        #expect(try response.json["index"] as? Int == 2)
    }

    @Test func pauseWithAndWithoutSecondsAndResume() async throws {
        let harness = RouterHarness()
        let timed = try await harness.sendJSON("POST", "/banner/pause", #"{"seconds": 2.5}"#).json
        #expect(timed["paused"] as? Bool == true)
        #expect(timed["pausedUntil"] as? String == "2026-11-29T20:00:02.500Z")
        #expect(timed["nextAdvanceAt"] is NSNull)
        let open = try await harness.send("POST", "/banner/pause").json
        #expect(open["pausedUntil"] is NSNull)
        harness.clock.set(t0 + .seconds(10))
        let resumed = try await harness.send("POST", "/banner/resume").json
        #expect(resumed["paused"] as? Bool == false)
        #expect(resumed["nextAdvanceAt"] as? String == "2026-11-29T20:00:14.000Z")
    }

    @Test(arguments: [#"{}"#, #"{"seconds": null}"#, ""])
    func anEmptyPauseBodyPausesWithoutEnd(_ body: String) async throws {
        let state = try await RouterHarness().sendJSON("POST", "/banner/pause", body).json
        #expect(state["paused"] as? Bool == true)
        #expect(state["pausedUntil"] is NSNull)
    }

    @Test(arguments: [
        "application/json", "application/json; charset=utf-8", "Application/JSON", "application/merge-patch+json",
    ])
    func jsonContentTypesAreAccepted(_ contentType: String) async {
        let response = await RouterHarness().send(
            "PUT", "/banner/index", headers: [("Content-Type", contentType)], body: #"{"index": 1}"#)
        #expect(response.status == 200)
    }

    /// A browser sends a body without a JSON type from a page of any origin without a preflight:
    /// a command or admin write must say it is JSON (docs/API.md, roles).
    @Test(arguments: [
        ("PUT", "/banner/index", #"{"index": 1}"#), ("POST", "/banner/pause", #"{"seconds": 5}"#),
        ("POST", "/carousels", #"{"name": "evil", "banners": [{"id": "a", "image": "https://evil.example/a.png"}]}"#),
        ("POST", "/carousels/default/takeover", #"{"banner": "b1"}"#),
        ("PATCH", "/carousels/default", #"{"interval": 9}"#),
    ])
    func aBodyWithoutAJSONContentTypeIs415AndChangesNothing(_ method: String, _ path: String, _ body: String) async {
        let harness = RouterHarness()
        let before = await harness.send("GET", "/banner").text
        let carousels = await harness.send("GET", "/carousels").text
        for headers in [[], [("Content-Type", "text/plain")], [("Content-Type", "application/x-www-form-urlencoded")]] {
            let response = await harness.send(method, path, headers: headers, body: body)
            #expect(response.status == 415, "\(method) \(path) with \(headers)")
            #expect(response.problemDetail?.contains("application/json") == true)
        }
        #expect(await harness.send("GET", "/banner").text == before)
        #expect(await harness.send("GET", "/carousels").text == carousels)
    }

    @Test(arguments: [CommandRoute.next, .previous])
    func movesWithoutBannersAre409(_ route: CommandRoute) async {
        let path = route == .next ? "/banner/next" : "/banner/previous"
        let response = await RouterHarness(banners: 0).send("POST", path)
        #expect(response.status == 409)
        #expect(response.problemDetail == "there are no banners to move to; add banners to the configuration")
    }

    @Test func jumpWithoutBannersIs409() async {
        #expect(await RouterHarness(banners: 0).sendJSON("PUT", "/banner/index", #"{"index": 0}"#).status == 409)
    }
}

@Suite("Bad requests change nothing")
struct RouterBadRequestTests {
    /// Sends the request, checks status and detail, and that the carousel did not change — the
    /// same check through the router and over HTTP.
    func expectRefused(
        on transport: Transport, _ method: String, _ path: String, body: String?,
        contentType: String? = "application/json", status: Int, detail: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let service = try await transport.start()
        let before = try await service.request("GET", "/banner").text
        let headers = contentType.map { [("Content-Type", $0)] } ?? []
        let response = try await service.request(method, path, headers: headers, body: body)
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type") == "application/problem+json", sourceLocation: sourceLocation)
        #expect(response.problemDetail == detail, sourceLocation: sourceLocation)
        let after = try await service.request("GET", "/banner").text
        #expect(after == before, "state unchanged", sourceLocation: sourceLocation)
    }

    @Test(arguments: Transport.allCases)
    func malformedJSON(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: #"{"index": 1"#, status: 400,
            detail: "request body: invalid JSON at line 1, column 12: expected ',' or '}' in an object")
    }

    /// An empty body is no body (a command without fields); whitespace alone is malformed JSON.
    @Test(arguments: Transport.allCases)
    func aBodyOfWhitespaceIsMalformed(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "POST", "/banner/pause", body: "\n", status: 400,
            detail: "request body: invalid JSON at line 2, column 1: unexpected end of input, expected a value")
    }

    @Test(arguments: Transport.allCases)
    func aBodyThatIsNotAnObject(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: "[1]", status: 400,
            detail: "request body must be a JSON object, got an array"
        )
    }

    @Test(arguments: Transport.allCases)
    func aMissingField(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: "{}", status: 400,
            detail: "field 'index': required field is missing; must be an integer")
    }

    @Test(arguments: Transport.allCases)
    func aMissingBody(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: nil, status: 400,
            detail: "missing body; send {\"index\": i} with Content-Type: application/json")
    }

    @Test(
        arguments: Transport.allCases,
        [
            (#"{"index": "2"}"#, "a string"), (#"{"index": 1.5}"#, "a number"), (#"{"index": null}"#, "null"),
        ])
    func aWrongFieldType(_ transport: Transport, _ example: (String, String)) async throws {
        let (body, kind) = example
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: body, status: 400,
            detail: "field 'index': must be an integer, got \(kind)")
    }

    @Test(arguments: Transport.allCases)
    func anUnknownField(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: #"{"index": 1, "animate": true}"#, status: 400,
            detail: "field 'animate': unknown field; expected one of: index")
        try await expectRefused(
            on: transport, "POST", "/banner/next", body: #"{"steps": 2}"#, status: 400,
            detail: "field 'steps': unknown field; this object takes no fields")
        try await expectRefused(
            on: transport, "POST", "/banner/pause", body: #"{"second": 5}"#, status: 400,
            detail: "field 'second': unknown field; expected one of: seconds")
    }

    /// Well-formed, impossible values: 422, naming the value and the allowed range.
    @Test(
        arguments: Transport.allCases,
        [
            ("PUT", "/banner/index", #"{"index": 5}"#, "index 5 is out of range: there are 5 banners (0...4)"),
            ("PUT", "/banner/index", #"{"index": -1}"#, "index -1 is out of range: there are 5 banners (0...4)"),
            (
                "PUT", "/banner/index", #"{"index": 99999999999999999999}"#,
                "index 99999999999999999999 is out of range; there are 5 banners"
            ),
            (
                "POST", "/banner/pause", #"{"seconds": 0}"#,
                "field 'seconds' must be a number of seconds greater than 0, got 0.0"
            ),
            (
                "POST", "/banner/pause", #"{"seconds": -3}"#,
                "field 'seconds' must be a number of seconds greater than 0, got -3.0"
            ),
            (
                "POST", "/banner/pause", #"{"seconds": 1e400}"#,
                "field 'seconds' must be a number of seconds greater than 0, got inf"
            ),
            (
                "POST", "/banner/pause", #"{"seconds": 40000000}"#,
                "field 'seconds' must be at most 31536000.0 seconds, got 40000000.0"
            ),
        ])
    func anImpossibleValueIs422(_ transport: Transport, _ example: (String, String, String, String)) async throws {
        let (method, path, body, detail) = example
        try await expectRefused(on: transport, method, path, body: body, status: 422, detail: detail)
    }

    @Test(arguments: Transport.allCases)
    func aWrongPauseTypeIs400(_ transport: Transport) async throws {
        try await expectRefused(
            on: transport, "POST", "/banner/pause", body: #"{"seconds": "5"}"#, status: 400,
            detail: "field 'seconds': must be a number or null, got a string")
    }

    @Test(arguments: Transport.allCases, ["text/plain", "application/x-www-form-urlencoded", "application/jsonx"])
    func aNonJSONContentTypeIs415(_ transport: Transport, _ contentType: String) async throws {
        try await expectRefused(
            on: transport, "PUT", "/banner/index", body: #"{"index": 1}"#, contentType: contentType, status: 415,
            detail: "Content-Type '\(contentType)' is not JSON; send application/json")
    }

    @Test func theBodyLimitAnswersProblemJSON() {
        let response = RouterHarness().api.respond(
            to: .bodyTooLarge(limit: 16384, method: "POST", path: "/banner/pause"))
        #expect(response.status == 413)
        #expect(response.problemDetail == "request body larger than 16384 bytes (maxBody)")
    }
}

@Suite("Control token")
struct RouterTokenTests {
    let token = "s3cret-token"

    @Test(arguments: [
        ("POST", "/banner/next"), ("POST", "/banner/previous"), ("PUT", "/banner/index"), ("POST", "/banner/pause"),
        ("POST", "/banner/resume"),
    ])
    func everyMutatingRequestNeedsTheToken(_ method: String, _ path: String) async {
        let harness = RouterHarness(token: token)
        let before = harness.engine.snapshot
        for headers in [[], [("Authorization", "Bearer wrong")], [("Authorization", "Basic czNjcmV0LXRva2Vu")]] {
            let response = await harness.send(method, path, headers: headers, body: #"{"index": 1}"#)
            #expect(response.status == 401)
            #expect(response.header("WWW-Authenticate") == "Bearer")
            #expect(
                response.problemDetail
                    == "missing or wrong bearer token; send Authorization: Bearer <CAROUSEL_CONTROL_TOKEN>")
        }
        #expect(harness.engine.snapshot == before)
    }

    @Test func theRightTokenIsAccepted() async {
        let harness = RouterHarness(token: token)
        #expect(
            await harness.send("POST", "/banner/next", headers: [("Authorization", "Bearer \(token)")]).status == 200)
        #expect(
            await harness.send("POST", "/banner/next", headers: [("authorization", "bearer \(token)")]).status == 200)
    }

    @Test func readsNeedNoToken() async {
        let harness = RouterHarness(token: token)
        for path in ["/banner", "/banners", "/banner/index", "/healthz"] {
            #expect(await harness.send("GET", path).status == 200)
        }
    }

    @Test func theTokenIsCheckedBeforeTheBody() async {
        let response = await RouterHarness(token: token).sendJSON("PUT", "/banner/index", "not json")
        #expect(response.status == 401)
    }

    @Test func theComparisonAcceptsOnlyTheExactToken() {
        let control = BearerToken(token)
        #expect(control.authorizes("Bearer s3cret-token"))
        #expect(control.authorizes("BEARER s3cret-token"))
        #expect(!control.authorizes("Bearer s3cret-toke"))
        #expect(!control.authorizes("Bearer s3cret-token2"))
        #expect(!control.authorizes("Bearer"))
        #expect(!control.authorizes("s3cret-token"))
        #expect(!control.authorizes(nil))
    }
}
