import BannerService
import Foundation
import TestSupport
import Testing

@testable import BannerAPI

/// The audit log over HTTP (docs/AUDIT.md): every kind of write is there with its actor and its
/// request's id, a refused one is not, and `GET /audit` reads it by filter and page, as JSON or
/// CSV, for the admin role only.
@Suite("Audit API")
struct AuditAPITests {
    /// The newest `count` entries as `actor action carousel target requestId` lines.
    static func newest(_ count: Int, of service: any TestService) async throws -> [String] {
        let answer = try await service.request("GET", "/audit?limit=\(count)")
        #expect(answer.status == 200)
        #expect(answer.header("Cache-Control") == "no-store")
        let entries = try #require(try answer.json["entries"] as? [[String: Any]])
        return entries.map { entry in
            ["actor", "action", "carousel", "target", "requestId"].map { "\(entry[$0] as? String ?? "-")" }
                .joined(separator: " ")
        }
    }

    static func id(_ requestID: String) -> [(String, String)] { [("X-Request-Id", requestID)] }

    @Test(arguments: Transport.eachStore)
    func everyKindOfWriteIsAuditedWithItsActorAndRequest(_ transport: Transport) async throws {
        let service = try await transport.start()
        let created = try await AdminAPITests.json(
            service, "POST", "/tokens", #"{"name": "ops", "role": "admin"}"#, headers: Self.id("t-1"))
        let secret = try #require(try created.json["secret"] as? String)
        let ops = TokenAPITests.bearer(secret)

        let steps: [(String, String, String?, String)] = [
            ("POST", "/carousels", AdminAPITests.lobby, "c-1"),
            ("PATCH", "/carousels/lobby", #"{"interval": 7200}"#, "c-2"),  // nothing advances during the test
            ("POST", "/carousels/lobby/banner/next", nil, "c-3"),
            ("POST", "/carousels/lobby/banner/pause", nil, "c-4"),
            ("POST", "/carousels/lobby/revisions/1/restore", nil, "c-5"),
            ("POST", "/carousels/lobby/takeover", #"{"banner": "c", "seconds": 60}"#, "c-7"),
            ("DELETE", "/carousels/lobby/takeover", nil, "c-8"),
        ]
        for (method, path, body, requestID) in steps {
            let answer = try await service.request(
                method, path, headers: ops + Self.id(requestID) + [("Content-Type", "application/json")], body: body)
            #expect(answer.status < 300, "\(method) \(path): \(answer.text)")
            #expect(answer.header("X-Request-Id") == requestID, "\(method) \(path) carries its request's id")
        }
        let image = try MediaAPITests.fixture("quadrant.png")
        let imageID = MediaAPITests.sha256(image)
        let uploaded = try await service.request(
            "POST", "/media", headers: ops + Self.id("m-1") + [("Content-Type", "image/png")], bytes: image)
        #expect(uploaded.status == 201)
        #expect(try await service.request("DELETE", "/media/\(imageID)", headers: ops + Self.id("m-2")).status == 204)
        // Without a token: commands are open here (`anonymous`), admin requests come from this host.
        let anonymous = try await service.request("POST", "/carousels/lobby/banner/resume")
        let madeID = try #require(anonymous.header("X-Request-Id"), "an id is made when none is sent")
        #expect(madeID.count == 36 && madeID.filter { $0 == "-" }.count == 4)
        #expect(try await service.request("DELETE", "/tokens/ops", headers: Self.id("t-2")).status == 204)
        #expect(try await service.request("DELETE", "/carousels/lobby", headers: Self.id("c-6")).status == 204)

        let newest = try await Self.newest(13, of: service)
        #expect(
            newest == [
                "loopback carousel.delete lobby - c-6",
                "loopback token.revoke - ops t-2",
                "anonymous command.resume lobby b \(madeID)",
                "ops media.delete - \(imageID) m-2",
                "ops media.upload - \(imageID) m-1",
                "ops takeover.end lobby b c-8",
                "ops takeover.start lobby c c-7",
                "ops carousel.restore lobby 1 c-5",
                "ops command.pause lobby b c-4",
                "ops command.next lobby b c-3",
                "ops carousel.patch lobby - c-2",
                "ops carousel.create lobby - c-1",
                "loopback token.create - ops t-1",
            ])
        let log = try await service.request("GET", "/audit")
        #expect(!log.text.contains(secret), "a secret is never in the audit log")
        let entries = try #require(try log.json["entries"] as? [[String: Any]])
        let revisions = entries.filter { $0["carousel"] as? String == "lobby" }.map { $0["revision"] as? Int }
        #expect(revisions == [3, 3, 3, 3, 3, 2, 2, 2, 1], "each entry names the revision it left (or deleted)")
    }

    /// A write refused (here an invalid body, a stale If-Match, a wrong role) answers its request's
    /// id, and appends nothing.
    @Test(arguments: Transport.eachStore)
    func aRefusedWriteIsNotAudited(_ transport: Transport) async throws {
        let service = try await transport.start()
        let before = try await service.request("GET", "/audit").json["entries"] as? [[String: Any]]
        let invalid = try await AdminAPITests.json(
            service, "PATCH", "/carousels/default", #"{"interval": "fast"}"#, headers: Self.id("bad-1"))
        #expect(invalid.status == 422)
        #expect(invalid.header("X-Request-Id") == "bad-1")
        let stale = try await AdminAPITests.json(
            service, "PATCH", "/carousels/default", #"{"interval": 5}"#, headers: [("If-Match", "\"nope\"")])
        #expect(stale.status == 412)
        let moved = try await service.request(
            "PUT", "/banner/index", headers: [("Content-Type", "application/json")],
            body: #"{"index": 99}"#)
        #expect(moved.status == 422)
        let after = try await service.request("GET", "/audit").json["entries"] as? [[String: Any]]
        #expect(after?.count == before?.count && after?.count == 1, "the seed or import only")
    }

    @Test(arguments: Transport.eachStore)
    func theLogIsReadByFilterAndPageAsJSONOrCSV(_ transport: Transport) async throws {
        let service = try await transport.start()
        for requestID in ["@first", "second", "-third"] {
            let answer = try await service.request("POST", "/banner/next", headers: Self.id(requestID))
            #expect(answer.status == 200)
        }
        let page = try await service.request("GET", "/audit?limit=2&carousel=default&actor=anonymous")
        let entries = try #require(try page.json["entries"] as? [[String: Any]])
        #expect(entries.map { $0["requestId"] as? String } == ["-third", "second"])
        let next = try #require(try page.json["next"] as? Int)
        let rest = try await service.request("GET", "/audit?limit=2&carousel=default&actor=anonymous&before=\(next)")
        #expect((try rest.json["entries"] as? [[String: Any]])?.map { $0["requestId"] as? String } == ["@first"])
        #expect(try rest.json["next"] is NSNull, "the last page")
        #expect((try await service.request("GET", "/audit?actor=nobody").json["entries"] as? [Any])?.isEmpty == true)
        let future = try await service.request("GET", "/audit?from=2200-01-01T00:00:00Z")
        #expect((try future.json["entries"] as? [Any])?.isEmpty == true)

        let csv = try await service.request("GET", "/audit?actor=anonymous", headers: [("Accept", "text/csv")])
        #expect(csv.status == 200 && csv.header("Content-Type") == "text/csv; charset=utf-8")
        let rows = csv.text.split(separator: "\r\n").map { $0.split(separator: ",", omittingEmptySubsequences: false) }
        #expect(rows.first == ["seq", "at", "actor", "action", "carousel", "target", "revision", "requestId"])
        #expect(
            rows.dropFirst().map { $0.last.map(String.init) } == ["'-third", "second", "'@first"],
            "a field a spreadsheet would take for a formula is quoted with '")
        #expect(rows.dropFirst().allSatisfy { $0.count == 8 && $0[2] == "anonymous" && $0[3] == "command.next" })
    }

    @Test(arguments: Transport.eachStore)
    func badQueriesAreRefusedNamingTheParameter(_ transport: Transport) async throws {
        let service = try await transport.start()
        let cases: [(String, Int, String)] = [
            ("limit=0", 400, "limit '0' is not a whole number from 1 to 10000"),
            ("limit=10001", 400, "limit '10001' is not a whole number from 1 to 10000"),
            ("before=x", 400, "before 'x' is not a whole number from 1 to 9223372036854775807"),
            ("from=yesterday", 400, "from 'yesterday' is not an RFC 3339 date-time (2026-12-01T00:00:00Z)"),
            (
                "from=2026-12-02T00:00:00Z&to=2026-12-01T00:00:00Z", 422,
                "from (2026-12-02T00:00:00.000Z) must be before to (2026-12-01T00:00:00.000Z)"
            ),
        ]
        for (query, status, detail) in cases {
            let answer = try await service.request("GET", "/audit?\(query)")
            #expect(answer.status == status, "\(query)")
            #expect(answer.problemDetail == detail, "\(query)")
        }
        let created = try await AdminAPITests.json(service, "POST", "/tokens", #"{"name": "kiosk", "role": "control"}"#)
        let secret = try #require(try created.json["secret"] as? String)
        let refused = try await service.request("GET", "/audit", headers: TokenAPITests.bearer(secret))
        #expect(refused.status == 403, "the audit log is the admin role's")
        #expect(try await service.request("DELETE", "/audit").status == 405, "append-only: nothing deletes it")
    }
}
