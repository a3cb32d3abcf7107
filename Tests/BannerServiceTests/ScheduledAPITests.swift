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
    static let running: [Transport] = [.live, .libmicrohttpd, .postgres]

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
        let at = Self.inSeconds(2)
        let scheduled = try await AdminAPITests.json(
            service, "PATCH", "/carousels/lobby?at=\(at)", #"{"interval": 9}"#, headers: [("X-Request-Id", "launch-1")])
        #expect(scheduled.status == 202, "\(scheduled.text)")
        let id = try #require(try scheduled.json["id"] as? Int)
        #expect(scheduled.header("Location") == "/carousels/lobby/pending/\(id)")
        #expect(try scheduled.json["path"] as? String == "/carousels/lobby")
        #expect((try scheduled.json["body"] as? [String: Any])?["interval"] as? Int == 9)
        // (Whether it is listed before its time is the cancellation test's: a loaded run may take
        // longer than 2 s to get here.)

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
            service, "PATCH", "/carousels/lobby?at=\(Self.inSeconds(2))", #"{"interval": 9}"#,
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

    @Test(arguments: Transport.allCases)
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

    @Test(arguments: Transport.allCases)
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
                "DELETE", "/carousels/lobby?at=\(Self.inSeconds(60))", "",
                "at: deleting a carousel cannot be scheduled; delete it when it is time"
            ),
            ("PATCH", "/carousels/lobby?at=\(Self.inSeconds(60))", #"{"interval": "soon"}"#, "interval"),
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
