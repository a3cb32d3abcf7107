import BannerService
import Foundation
import TestSupport
import Testing

@testable import BannerAPI

/// A carousel's history over HTTP (docs/HISTORY.md): revisions listed, read and restored, each
/// check against the router and the live service on every store.
@Suite("History API")
struct HistoryAPITests {
    private static func revisions(_ service: any TestService, of name: String = "lobby") async throws
        -> [[String: Any]]
    {
        let response = try await service.request("GET", "/carousels/\(name)/revisions")
        #expect(response.status == 200)
        #expect(response.header("Cache-Control") == "no-store")
        #expect(try response.json["carousel"] as? String == name)
        return try #require(try response.json["revisions"] as? [[String: Any]])
    }

    @Test(arguments: Transport.eachStore)
    func editsAreListedNewestFirstWithWhoAndWhat(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await AdminAPITests.create(service)
        #expect(try await AdminAPITests.json(service, "PATCH", "/carousels/lobby", #"{"interval": 5}"#).status == 200)
        let banner = #"{"image": "https://cdn.example.com/b2.png", "caption": "B"}"#
        #expect(try await AdminAPITests.json(service, "PUT", "/carousels/lobby/banners/b", banner).status == 200)
        // Commands are not definition changes.
        #expect(try await service.request("POST", "/carousels/lobby/banner/next").status == 200)

        let history = try await Self.revisions(service)
        #expect(history.map { $0["revision"] as? Int } == [3, 2, 1])
        #expect(history.map { $0["actor"] as? String } == ["loopback", "loopback", "loopback"])
        #expect(
            history.map { $0["summary"] as? String } == [
                "banner 'b' changed: image, caption", "interval 3600.0 s → 5.0 s", "created with 3 banners",
            ])
        for entry in history {
            let at = try #require(entry["at"] as? String)
            #expect(at.wholeMatch(of: /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/) != nil, "at: \(at)")
        }

        let first = try await service.request("GET", "/carousels/lobby/revisions/1")
        #expect(first.status == 200)
        #expect(try first.json["revision"] as? Int == 1)
        #expect(try first.json["interval"] as? Double == 3600)
        let banners = try #require(try first.json["banners"] as? [[String: Any]])
        #expect(banners.map { $0["image"] as? String }.contains("https://cdn.example.com/b.png"))
        // What it answers is a definition a PUT takes back as it is.
        let put = try await AdminAPITests.json(service, "PUT", "/carousels/lobby", first.text)
        #expect(put.status == 200)
        #expect(try put.json["revision"] as? Int == 4)
    }

    @Test(arguments: Transport.eachStore)
    func aRestoreIsANewRevisionEqualToTheOldOne(_ transport: Transport) async throws {
        let service = try await transport.start()
        let created = try await AdminAPITests.create(service)
        let firstTag = try #require(created.header("ETag"))
        let patched = try await AdminAPITests.json(service, "PATCH", "/carousels/lobby", #"{"interval": 5}"#)
        let secondTag = try #require(patched.header("ETag"))

        let stale = try await service.request(
            "POST", "/carousels/lobby/revisions/1/restore", headers: [("If-Match", firstTag)])
        #expect(stale.status == 412)
        #expect(try await Self.revisions(service).count == 2, "a refused restore keeps nothing")
        #expect(try await service.request("GET", "/carousels/lobby").json["interval"] as? Double == 5)

        let restored = try await service.request(
            "POST", "/carousels/lobby/revisions/1/restore", headers: [("If-Match", secondTag)])
        #expect(restored.status == 200)
        #expect(try restored.json["revision"] as? Int == 3)
        #expect(try restored.json["interval"] as? Double == 3600)
        let definition = try await service.request("GET", "/carousels/lobby")
        #expect(definition.header("ETag") == restored.header("ETag"))
        #expect(try definition.json["interval"] as? Double == 3600)
        let latest = try #require(try await Self.revisions(service).first)
        #expect(latest["summary"] as? String == "restored revision 1: interval 5.0 s → 3600.0 s")
    }

    @Test(arguments: Transport.eachStore)
    func aRevisionThatIsNotKeptIsA404NamingIt(_ transport: Transport) async throws {
        let service = try await transport.start()
        _ = try await AdminAPITests.create(service)
        for path in ["/carousels/lobby/revisions/2", "/carousels/lobby/revisions/9223372036854775807"] {
            let response = try await service.request("GET", path)
            #expect(response.status == 404, "\(path)")
            #expect(response.problemDetail?.contains("keeps no revision") == true, "\(path)")
        }
        for text in ["0", "-1", "abc", "1.0", "+1", "99999999999999999999"] {
            let response = try await service.request("GET", "/carousels/lobby/revisions/\(text)")
            #expect(response.status == 404, "\(text)")
            #expect(response.problemDetail?.hasPrefix("'\(text)' is not a revision of carousel 'lobby'") == true)
        }
        let restore = try await service.request("POST", "/carousels/lobby/revisions/7/restore")
        #expect(restore.status == 404)
        #expect(restore.problemDetail?.hasPrefix("carousel 'lobby' keeps no revision 7") == true)
        #expect(try await service.request("GET", "/carousels/nope/revisions").status == 404)
        #expect(try await service.request("DELETE", "/carousels/lobby/revisions").status == 405)
        #expect(try await service.request("GET", "/carousels/lobby/revisions/1/restore").status == 405)
        #expect(try await Self.revisions(service).count == 1, "nothing was changed")
    }

    /// History says who changed what: the admin role's; a change made with the admin token is
    /// `env:admin`'s.
    @Test func historyIsForTheAdminRoleAndNamesTheToken() async throws {
        let harness = RouterHarness(adminToken: "s3cret")
        let admin = [("Authorization", "Bearer s3cret")]
        let patched = await harness.send(
            "PATCH", "/carousels/default", headers: admin + [("Content-Type", "application/json")],
            body: #"{"autoplay": false}"#)
        #expect(patched.status == 200)
        for path in ["/carousels/default/revisions", "/carousels/default/revisions/1"] {
            #expect(await harness.send("GET", path).status == 401, "\(path)")
        }
        #expect(await harness.send("POST", "/carousels/default/revisions/1/restore").status == 401)
        let history = await harness.send("GET", "/carousels/default/revisions", headers: admin)
        let entries = try #require(try history.json["revisions"] as? [[String: Any]])
        #expect(entries.map { $0["actor"] as? String } == ["env:admin", "import"])
        #expect(entries.first?["summary"] as? String == "autoplay off")
    }
}
