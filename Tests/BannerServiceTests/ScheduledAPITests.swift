import BannerService
import Foundation
import TestSupport
import Testing
import TimeZones

@testable import BannerAPI

/// Scheduled changes over HTTP (docs/SCHEDULED.md): a write with `?at=` is kept, listed and made
/// at its time by the carousel's timer (as its requester, in the audit log and the history), or
/// dropped saying why when its If-Match no longer holds; cancelled on request; a bad `at` is a
/// 422 naming it. Made changes need a running service: the live transports.
@Suite("Scheduled changes API")
struct ScheduledAPITests {
    static let running: [Transport] = [.live, .postgres]

    /// `seconds` from now on the service's clock (the tests' clock is the same), as RFC 3339.
    static func inSeconds(_ seconds: Int64) -> String {
        (Timestamp.now() + .seconds(seconds)).rfc3339
    }

    static func pending(_ service: any TestService, _ carousel: String = "lobby") async throws -> [[String: Any]] {
        let answer = try await service.request("GET", "/carousels/\(carousel)/pending")
        return try #require(try answer.json["pending"] as? [[String: Any]])
    }

    static func definition(_ service: any TestService) async throws -> [String: Any] {
        try await service.request("GET", "/carousels/lobby").json
    }

    @Test(arguments: running)
    func aScheduledChangeIsListedThenMadeAtItsTimeAsItsRequesters(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await AdminAPITests.create(service).status == 201)
        let at = Self.inSeconds(15)
        let scheduled = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(at)", #"{"interval": 9}"#, headers: [("X-Request-Id", "launch-1")])
        #expect(scheduled.status == 202, "\(scheduled.text)")
        let id = try #require(try scheduled.json["id"] as? Int)
        #expect(scheduled.header("Location") == "/carousels/lobby/pending/\(id)")
        #expect(try scheduled.json["path"] as? String == "/carousels/lobby")
        #expect((try scheduled.json["body"] as? [String: Any])?["interval"] as? Int == 9)
        // (Whether it is listed before its time is the cancellation test's: a loaded run may take
        // longer than 15 s to get here.)

        #expect(
            try await eventually { try await Self.definition(service)["interval"] as? Double == 9 },
            "made at its time")
        #expect(try await Self.pending(service).isEmpty)
        #expect(try await Self.definition(service)["revision"] as? Int == 2)
        let entries = try #require(
            try await service.request("GET", "/audit?carousel=lobby").json["entries"] as? [[String: Any]])
        #expect(
            entries.prefix(2).map { "\($0["actor"]!) \($0["action"]!) \($0["requestId"]!)" } == [
                "loopback carousel.patch launch-1", "loopback change.schedule launch-1",
            ])
        let made = try #require(Timestamp(rfc3339: entries[0]["at"] as? String ?? ""))
        #expect(made >= Timestamp(rfc3339: at)!, "never before its time")
    }

    @Test(arguments: running)
    func aChangeWhoseIfMatchNoLongerHoldsIsNotMadeAndTheLogSaysWhy(_ transport: Transport) async throws {
        let service = try await transport.start()
        let created = try await AdminAPITests.create(service)
        let tag = try #require(created.header("ETag"))
        // Changed now, then a change scheduled with the ETag of before: its If-Match fails at T.
        #expect(try await AdminAPITests.json(service, "PATCH", "/carousels/lobby", #"{"interval": 7}"#).status == 200)
        let scheduled = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(Self.inSeconds(15))", #"{"interval": 9}"#,
            headers: [("If-Match", tag)])
        #expect(scheduled.status == 202)
        let id = try #require(try scheduled.json["id"] as? Int)

        #expect(try await eventually { try await Self.pending(service).isEmpty }, "dropped at its time")
        #expect(try await Self.definition(service)["interval"] as? Double == 7, "the change made meanwhile stays")
        #expect(try await Self.definition(service)["revision"] as? Int == 2)
        let skipped = try await service.request("GET", "/audit?limit=1").json["entries"] as? [[String: Any]]
        #expect(skipped?.first?["action"] as? String == "change.skip")
        #expect(
            skipped?.first?["target"] as? String
                == "\(id): its If-Match no longer holds: the carousel is at revision 2")
    }

    /// A change asked by a named token is made at its time only if that token still may: revoking
    /// a token withdraws what it scheduled, and the audit log says so (expiry and the other rules,
    /// on exact times: TokenStandingTests).
    @Test(arguments: running)
    func aChangeWhoseTokenWasRevokedSinceIsNotMade(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await AdminAPITests.create(service).status == 201)
        let created = try await AdminAPITests.json(service, "POST", "/tokens", #"{"name": "planner", "role": "admin"}"#)
        #expect(created.status == 201, "\(created.text)")
        let secret = try #require(try created.json["secret"] as? String)
        let scheduled = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(Self.inSeconds(15))", #"{"interval": 9}"#,
            headers: [("Authorization", "Bearer \(secret)")])
        #expect(scheduled.status == 202, "\(scheduled.text)")
        let id = try #require(try scheduled.json["id"] as? Int)
        #expect(try await service.request("DELETE", "/tokens/planner").status == 204)

        #expect(try await eventually { try await Self.pending(service).isEmpty }, "dropped at its time")
        #expect(try await Self.definition(service)["interval"] as? Double == 3600, "not made")
        let skipped = try await service.request("GET", "/audit?limit=1").json["entries"] as? [[String: Any]]
        #expect(skipped?.first?["action"] as? String == "change.skip")
        #expect(skipped?.first?["target"] as? String == "\(id): the token 'planner' that asked for it was revoked")
    }

    @Test(arguments: Transport.eachStore)
    func aPendingChangeIsCancelledOnce(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await AdminAPITests.create(service).status == 201)
        let scheduled = try await AdminAPITests.json(
            service, "POST", "/carousels/lobby/banners?position=0&at=\(Self.inSeconds(3600))",
            #"{"id": "sale", "image": "https://cdn.example.com/sale.png"}"#)
        #expect(scheduled.status == 202)
        let id = try #require(try scheduled.json["id"] as? Int)
        #expect(try scheduled.json["path"] as? String == "/carousels/lobby/banners?position=0")
        #expect(try await Self.pending(service).map { $0["id"] as? Int } == [id], "listed until its time")
        #expect(try await service.request("DELETE", "/carousels/lobby/pending/\(id)").status == 204)
        let again = try await service.request("DELETE", "/carousels/lobby/pending/\(id)")
        #expect(again.status == 404)
        #expect(
            again.problemDetail
                == "carousel 'lobby' has no pending change \(id); GET /carousels/lobby/pending lists them")
        #expect(try await Self.pending(service).isEmpty)
        let entries = try await service.request("GET", "/audit?limit=1").json["entries"] as? [[String: Any]]
        #expect(entries?.first?["action"] as? String == "change.cancel")
        #expect(entries?.first?["target"] as? String == String(id))
    }

    /// The timeline plans pending changes: an entry at each one's time naming it, the rotation
    /// after it the changed one's, the content of a banner it adds; one whose If-Match will not
    /// hold is not planned. (On the live transports: `at` is read from the tests' clock.)
    @Test(arguments: running)
    func theTimelinePlansThePendingChanges(_ transport: Transport) async throws {
        let service = try await transport.start()
        let tag = try #require(try await AdminAPITests.create(service).header("ETag"))
        let stale = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(Self.inSeconds(900))", #"{"interval": 5}"#,
            headers: [("If-Match", tag)])
        #expect(stale.status == 202)
        #expect(
            try await AdminAPITests.json(service, "PATCH", "/carousels/lobby", #"{"interval": 1800}"#).status == 200)
        let faster = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(Self.inSeconds(600))", #"{"interval": 60}"#)
        let added = try await AdminAPITests.json(
            service, "POST", "/carousels/lobby/banners?position=1&at=\(Self.inSeconds(1200))",
            #"{"id": "sale", "image": "https://cdn.example.com/sale.png", "caption": "Sale"}"#)
        #expect(faster.status == 202 && added.status == 202)

        let timeline = try await service.request("GET", "/carousels/lobby/timeline?hours=1")
        #expect(timeline.status == 200)
        let entries = try #require(try timeline.json["entries"] as? [[String: Any]])
        let made = entries.filter { $0["change"] != nil }
        #expect(made.map { $0["change"] as? Int } == [try faster.json["id"] as? Int, try added.json["id"] as? Int])
        #expect(
            made.map { $0["at"] as? String } == [try faster.json["at"] as? String, try added.json["at"] as? String])
        let fasterAt = try #require(made.first?["at"] as? String)
        let afterFaster = entries.filter { ($0["at"] as? String ?? "") > fasterAt }
        #expect(afterFaster.count > 20, "a change a minute after the interval goes to 60 s: \(afterFaster.count)")
        let sale = entries.filter { $0["banner"] as? String == "sale" }
        #expect(!sale.isEmpty)
        #expect(sale.allSatisfy { ($0["content"] as? [String: Any])?["caption"] as? String == "Sale" })
        #expect(entries.filter { $0["banner"] as? String == "a" }.allSatisfy { $0["content"] == nil }, "as listed")
        #expect(try await Self.pending(service).count == 3, "planned, not made")
    }

    @Test(arguments: Transport.eachStore)
    func aBadAtIsRefusedNamingItAndNothingIsScheduled(_ transport: Transport) async throws {
        let service = try await transport.start()
        #expect(try await AdminAPITests.create(service).status == 201)
        let cases: [(String, String, String, String)] = [
            (
                "PATCH", "/carousels/lobby?at=tomorrow", #"{"interval": 9}"#,
                "at: 'tomorrow' is not an RFC 3339 date-time (2026-12-24T18:00:00+01:00)"
            ),
            (
                "PATCH", "/carousels/lobby?at=2020-01-01T00:00:00Z", #"{"interval": 9}"#,
                "at: 2020-01-01T00:00:00.000Z is not in the future (now is "
            ),
            (
                "PATCH", "/carousels/lobby?at=2200-01-01T00:00:00Z", #"{"interval": 9}"#,
                "at: 2200-01-01T00:00:00.000Z is more than a year ahead"
            ),
            (
                "DELETE", "/carousels/lobby?at=\(Self.inSeconds(3600))", "",
                "at: deleting a carousel cannot be scheduled; delete it when it is time"
            ),
            ("PATCH", "/carousels/lobby?at=\(Self.inSeconds(3600))", #"{"interval": "soon"}"#, "interval"),
        ]
        for (method, path, body, detail) in cases {
            let answer = try await AdminAPITests.json(service, method, path, body)
            #expect(answer.status == 422, "\(method) \(path)")
            #expect(answer.problemDetail?.hasPrefix(detail) == true, "\(answer.problemDetail ?? "")")
        }
        #expect(try await Self.pending(service).isEmpty)
        #expect(try await Self.definition(service)["revision"] as? Int == 1)
    }
}
