import BannerService
import Foundation
import Logging
import TestSupport
import Testing
import Threading
import TimeZones

@testable import BannerAPI

/// Named tokens over HTTP (docs/TOKENS.md): created with their secret shown once, granting their
/// role on their carousels, revoked at once; the environment's tokens stay as they were.
@Suite("Token API")
struct TokenAPITests {
    static func create(_ service: any TestService, _ body: String, headers: [(String, String)] = []) async throws
        -> HTTPResponse
    {
        try await AdminAPITests.json(service, "POST", "/tokens", body, headers: headers)
    }

    static func bearer(_ secret: String) -> [(String, String)] { [("Authorization", "Bearer \(secret)")] }

    @Test(arguments: Transport.allCases)
    func aControlTokenIsShownOnceWorksForCommandsAndStopsWhenRevoked(_ transport: Transport) async throws {
        let service = try await transport.start(token: "env-control")
        let created = try await Self.create(service, #"{"name": "ci", "role": "control"}"#)
        #expect(created.status == 201)
        #expect(created.header("Cache-Control") == "no-store")
        let secret = try #require(try created.json["secret"] as? String)
        #expect(secret.hasPrefix("bct_") && secret.count == 47)
        #expect(try created.json["createdBy"] as? String == "loopback")
        #expect(try created.json["carousels"] is NSNull && created.json["expiresAt"] is NSNull)

        let listed = try await service.request("GET", "/tokens")
        #expect(!listed.text.contains(secret) && !listed.text.contains("secret"), "the secret is shown once only")
        let tokens = try #require(try listed.json["tokens"] as? [[String: Any]])
        #expect(tokens.map { $0["name"] as? String } == ["ci"])
        #expect(tokens.first?["role"] as? String == "control" && tokens.first?["expired"] as? Bool == false)

        #expect(try await service.request("POST", "/banner/next").status == 401, "commands need a token")
        #expect(try await service.request("POST", "/banner/next", headers: Self.bearer(secret)).status == 200)
        #expect(try await service.request("POST", "/banner/next", headers: Self.bearer("env-control")).status == 200)
        let patch = try await AdminAPITests.json(
            service, "PATCH", "/carousels/default", #"{"interval": 5}"#, headers: Self.bearer(secret))
        #expect(patch.status == 403, "a control token makes no admin request")
        #expect(patch.problemDetail == "the token 'ci' has the control role; this request needs the admin role")

        #expect(try await service.request("DELETE", "/tokens/ci").status == 204)
        #expect(try await service.request("POST", "/banner/next", headers: Self.bearer(secret)).status == 401)
        #expect(try await service.request("DELETE", "/tokens/ci").status == 404)
        #expect(try await service.request("GET", "/tokens").json["tokens"] as? [Any] != nil)
    }

    /// An admin token scoped to a carousel edits it (its name in the history) and nothing else.
    @Test(arguments: Transport.allCases)
    func aScopedAdminTokenActsOnItsCarouselsOnly(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await AdminAPITests.create(service)
        let created = try await Self.create(
            service, #"{"name": "lobby-team", "role": "admin", "carousels": ["lobby"]}"#)
        let secret = try #require(try created.json["secret"] as? String)
        #expect(try created.json["carousels"] as? [String] == ["lobby"])

        let edited = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby", #"{"interval": 5}"#, headers: Self.bearer(secret))
        #expect(edited.status == 200)
        let history = try await service.request("GET", "/carousels/lobby/revisions", headers: Self.bearer(secret))
        let latest = try #require((try history.json["revisions"] as? [[String: Any]])?.first)
        #expect(latest["actor"] as? String == "lobby-team")
        #expect(
            try await service.request("POST", "/carousels/lobby/banner/next", headers: Self.bearer(secret)).status
                == 200, "admin includes control")

        let elsewhere = try await AdminAPITests.json(
            service, "PATCH", "/carousels/default", #"{"interval": 5}"#, headers: Self.bearer(secret))
        #expect(elsewhere.status == 403)
        #expect(elsewhere.problemDetail == "the token 'lobby-team' is for the carousels lobby only, not 'default'")
        for (method, path) in [("GET", "/tokens"), ("GET", "/media"), ("GET", "/screens"), ("DELETE", "/tokens/x")] {
            let refused = try await service.request(method, path, headers: Self.bearer(secret))
            #expect(refused.status == 403, "\(method) \(path)")
        }
        let create = try await AdminAPITests.json(
            service, "POST", "/carousels", #"{"name": "hall"}"#, headers: Self.bearer(secret))
        #expect(create.status == 403)
        #expect(try await service.request("GET", "/carousels/hall").status == 404)
    }

    @Test(arguments: Transport.allCases)
    func aBadTokenRequestNamesTheFieldAndCreatesNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await Self.create(service, #"{"name": "ci", "role": "stats"}"#).status == 201)
        let refused: [(body: String, status: Int, detail: String)] = [
            (#"{"name": "ci", "role": "admin"}"#, 409, "a token named 'ci' exists already"),
            (#"{"name": "CI", "role": "admin"}"#, 422, "name: 'CI' is not a token name"),
            (#"{"name": "loopback", "role": "admin"}"#, 422, "name: 'loopback' is reserved"),
            (#"{"name": "x", "role": "owner"}"#, 422, "role: 'owner' is no role"),
            (#"{"name": "x", "role": "admin", "carousels": ["nope"]}"#, 422, "carousels[0]: no carousel named 'nope'"),
            (#"{"name": "x", "role": "admin", "carousels": []}"#, 422, "carousels: name at least one carousel"),
            (#"{"name": "x", "role": "admin", "carousels": [7]}"#, 422, "carousels[0]: must be a string"),
            (#"{"name": "x", "role": "admin", "expiresAt": "2001-01-01T00:00:00Z"}"#, 422, "expiresAt: 2001-"),
            (#"{"name": "x", "role": "admin", "expiresAt": "tomorrow"}"#, 422, "expiresAt: 'tomorrow' is not"),
            (#"{"name": "x", "role": "admin", "secret": "mine"}"#, 422, "secret: unknown field"),
            (#"{"role": "admin"}"#, 422, "name: required field is missing"),
            (#"["x"]"#, 422, "(document): must be a JSON object"),
        ]
        for (body, status, detail) in refused {
            let response = try await Self.create(service, body)
            #expect(response.status == status, "\(body): \(response.text)")
            #expect(response.problemDetail?.hasPrefix(detail) == true, "\(body): \(response.text)")
        }
        #expect(try await service.request("POST", "/tokens").status == 400)
        let tokens = try await service.request("GET", "/tokens").json["tokens"] as? [[String: Any]]
        #expect(tokens?.map { $0["name"] as? String } == ["ci"], "nothing else was created")
    }

    /// A secret is in the creation's answer and nowhere else: no log line at any level, whatever
    /// the token is used for, refused for, or after it is revoked.
    @Test func aSecretAppearsInNoLogLine() async throws {
        let lines = Lock<[String]>([])
        let logger = Logger(label: "test", minimumLevel: .trace, sink: { line in lines.withLock { $0.append(line) } })
        let harness = RouterHarness(token: "env-control", logger: logger)
        let created = await harness.send(
            "POST", "/tokens", headers: [("Content-Type", "application/json")],
            body: #"{"name": "ci", "role": "control"}"#)
        let secret = try #require(try created.json["secret"] as? String)
        let bearer = Self.bearer(secret)
        #expect(await harness.send("POST", "/banner/next", headers: bearer).status == 200)
        #expect(await harness.send("PATCH", "/carousels/default", headers: bearer, body: "{}").status == 403)
        #expect(await harness.send("DELETE", "/tokens/ci").status == 204)
        #expect(await harness.send("POST", "/banner/next", headers: bearer).status == 401)
        let logged = lines.withLock { $0 }
        // Each write's line names its request's id (docs/AUDIT.md).
        #expect(
            logged.contains {
                $0.contains(/POST \/tokens \[[0-9a-f-]{36}\] → token 'ci' created by loopback: control$/)
            })
        #expect(
            logged.contains { $0.contains(/DELETE \/tokens\/ci \[[0-9a-f-]{36}\] → token 'ci' revoked by loopback$/) })
        #expect(!logged.contains { $0.contains(secret) || $0.contains(String(secret.dropFirst(4).prefix(12))) })
    }

    /// A stats token reads stats, and nothing else that needs a token.
    @Test func aStatsTokenReadsStatsOnly() async throws {
        let harness = RouterHarness(token: "env-control", adminToken: "env-admin")
        let admin = Self.bearer("env-admin")
        let created = await harness.send(
            "POST", "/tokens", headers: admin + [("Content-Type", "application/json")],
            body: #"{"name": "dashboard", "role": "stats"}"#)
        #expect(created.status == 201)
        #expect(try created.json["createdBy"] as? String == "env:admin")
        let secret = try #require(try created.json["secret"] as? String)
        let stats = Self.bearer(secret)
        #expect(await harness.send("GET", "/carousels/default/stats", headers: stats).status == 200)
        #expect(await harness.send("GET", "/carousels/default/stats").status == 401)
        #expect(await harness.send("POST", "/banner/next", headers: stats).status == 403)
        #expect(await harness.send("GET", "/carousels/default/revisions", headers: stats).status == 403)
        #expect(await harness.send("GET", "/tokens", headers: stats).status == 403)
    }

    /// Expiry on the service's clock: refused from `expiresAt` on, and listed as expired.
    @Test func anExpiredTokenIsRefusedAndListedAsExpired() async throws {
        let harness = RouterHarness(token: "env-control")
        let expiry = t0 + .seconds(60)
        let created = await harness.send(
            "POST", "/tokens", headers: [("Content-Type", "application/json")],
            body: #"{"name": "temp", "role": "control", "expiresAt": "\#(expiry.rfc3339)"}"#)
        #expect(created.status == 201, "\(created.text)")
        let secret = try #require(try created.json["secret"] as? String)
        #expect(await harness.send("POST", "/banner/next", headers: Self.bearer(secret)).status == 200)
        harness.clock.set(expiry)
        let refused = await harness.send("POST", "/banner/next", headers: Self.bearer(secret))
        #expect(refused.status == 401)
        #expect(refused.problemDetail?.hasPrefix("the token 'temp' expired at \(expiry.rfc3339)") == true)
        let listed = try await harness.send("GET", "/tokens").json["tokens"] as? [[String: Any]]
        #expect(listed?.first?["expired"] as? Bool == true)
    }
}
