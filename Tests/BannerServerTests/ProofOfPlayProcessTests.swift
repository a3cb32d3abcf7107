import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// Proof of play across processes (docs/STATS.md): a graceful stop writes every count, `kill -9`
/// loses only what came after the last flush, and replicas sharing PostgreSQL add up.
@Suite("Proof of play, across processes")
struct ProofOfPlayProcessTests {
    /// A folder with `config/carousel.json`: banners `a` (with a link) and `b`, one second each.
    static func workingDirectory() throws -> URL {
        try StoreProcessTests.workingDirectory(
            configuration: #"""
                {"host": "127.0.0.1", "port": 0, "interval": 1,
                 "banners": [{"id": "a", "image": "https://cdn.example.com/a.png", "link": "https://shop.example.com/"},
                             {"id": "b", "image": "https://cdn.example.com/b.png"}]}
                """#)
    }

    /// The service's time, to the millisecond, as `GET /time` gives it.
    static func now(_ port: Int) async throws -> String {
        let millis = try #require(try await httpRequest(port: port, "GET", "/time").json["epochMillis"] as? Double)
        let seconds = Int64(millis / 1000)
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date)
    }

    /// Views of `banners` now; with `ids`, each view with its id (as a page sends them).
    static func reportViews(_ port: Int, _ banners: [String], ids: [String]? = nil) async throws {
        let at = try await now(port)
        let list = banners.enumerated().map { index, banner in
            let id = ids.map { #", "id": "\#($0[index])""# } ?? ""
            return #"{"banner": "\#(banner)", "at": "\#(at)", "ms": 1200\#(id)}"#
        }
        let response = try await httpRequest(
            port: port, "POST", "/carousels/default/views", headers: [("Content-Type", "application/json")],
            body: Array(#"{"views": [\#(list.joined(separator: ","))]}"#.utf8))
        #expect(response.status == 204)
    }

    struct Totals: Equatable {
        var plays = 0
        var shownSeconds = 0.0
        var views: [String: Int] = [:]
        var clicks: [String: Int] = [:]
    }

    /// The last day's stats of `default`, summed over the buckets.
    static func totals(_ port: Int) async throws -> Totals {
        let stats = try await httpRequest(port: port, "GET", "/carousels/default/stats")
        var totals = Totals()
        for row in try stats.json["rows"] as? [[String: Any]] ?? [] {
            let banner = row["banner"] as? String ?? ""
            totals.plays += row["plays"] as? Int ?? 0
            totals.shownSeconds += row["shownSeconds"] as? Double ?? 0
            totals.views[banner, default: 0] += row["views"] as? Int ?? 0
            totals.clicks[banner, default: 0] += row["clicks"] as? Int ?? 0
        }
        return totals
    }

    @Test func aGracefulStopWritesEveryCount() async throws {
        let directory = try Self.workingDirectory()
        let first = try ServerProcess(arguments: [], workingDirectory: directory)
        var port = try await first.waitForPort()
        try await Self.reportViews(port, ["a", "a", "b"])
        for _ in 0..<2 {
            #expect(try await httpRequest(port: port, "GET", "/carousels/default/banners/a/click").status == 302)
        }
        #expect(await eventually { (try? await Self.totals(port).plays) ?? 0 >= 2 }, "the carousel moved on")
        first.signal(SIGTERM)
        #expect(await first.waitForExit(seconds: 5) == 0)

        let second = try ServerProcess(arguments: [], workingDirectory: directory)
        port = try await second.waitForPort()
        let totals = try await Self.totals(port)
        #expect(totals.views == ["a": 2, "b": 1] && totals.clicks == ["a": 2, "b": 0])
        #expect(totals.plays >= 2 && totals.shownSeconds >= 1)
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 5) == 0)
    }

    /// Flushed every 0.2 s: once the store has the counts, `kill -9` cannot take them.
    @Test func killNineLosesOnlyWhatCameAfterTheLastFlush() async throws {
        let directory = try Self.workingDirectory()
        let environment = ["CAROUSEL_STATS_FLUSH": "0.2"]
        let first = try ServerProcess(arguments: [], environment: environment, workingDirectory: directory)
        var port = try await first.waitForPort()
        try await Self.reportViews(port, ["a", "b", "b"])
        #expect(try await httpRequest(port: port, "GET", "/carousels/default/banners/a/click").status == 302)
        // Read from the file by another connection, as the flush timer wrote it (no stats request,
        // which would flush by itself).
        let store = try SQLiteConnection(path: directory.appendingPathComponent("data/carousel.db").path)
        let flushed = await eventually {
            let statement = try? store.statement("SELECT sum(views), sum(clicks) FROM engagement")
            guard let statement, (try? statement.step()) == true else { return false }
            defer { statement.reset() }
            return statement.integer(0) == 3 && statement.integer(1) == 1
        }
        #expect(flushed, "the timer wrote the counts within its interval")
        first.signal(SIGKILL)
        _ = await first.waitForExit(seconds: 5)

        let second = try ServerProcess(arguments: [], environment: environment, workingDirectory: directory)
        port = try await second.waitForPort()
        let totals = try await Self.totals(port)
        #expect(totals.views == ["a": 1, "b": 2] && totals.clicks == ["a": 1, "b": 0])
        #expect(totals.plays >= 1)
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 5) == 0)
    }

    /// A view sent with its id is acknowledged once the store has it: `kill -9` right after the
    /// answer cannot take it (docs/STATS.md), whatever the flush interval.
    @Test func aViewWithAnIDIsStoredBeforeItIsAcknowledged() async throws {
        let directory = try Self.workingDirectory()
        let environment = ["CAROUSEL_STATS_FLUSH": "10"]  // the longest: the timer does not write meanwhile
        let first = try ServerProcess(arguments: [], environment: environment, workingDirectory: directory)
        var port = try await first.waitForPort()
        try await Self.reportViews(port, ["a", "b"], ids: ["page-1.view-1", "page-1.view-2"])
        first.signal(SIGKILL)
        _ = await first.waitForExit(seconds: 5)

        let second = try ServerProcess(arguments: [], environment: environment, workingDirectory: directory)
        port = try await second.waitForPort()
        #expect(try await Self.totals(port).views == ["a": 1, "b": 1])
        second.signal(SIGTERM)
        #expect(await second.waitForExit(seconds: 5) == 0)
    }

    /// Two replicas on one database: their views and clicks add up, and the plays both of them
    /// saw are counted once (the seconds shown never exceed the time that passed).
    @Test func replicasOnPostgreSQLAddUpAndCountEachPlayOnce() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let environment = ["CAROUSEL_STATS_FLUSH": "0.2"]
        let started = ContinuousClock.now  // no play can have begun before
        let first = try ServerProcess(
            arguments: ["--store", uri], environment: environment, workingDirectory: Self.workingDirectory())
        let firstPort = try await first.waitForPort()
        let second = try ServerProcess(
            arguments: ["--store", uri], environment: environment, workingDirectory: Self.workingDirectory())
        let secondPort = try await second.waitForPort()
        try await Self.reportViews(firstPort, ["a", "a"])
        try await Self.reportViews(secondPort, ["a", "b", "b"])
        // A page's flush sent to one replica, its answer lost, sent again to the other: once.
        try await Self.reportViews(firstPort, ["b", "a"], ids: ["page-1.view-1", "page-1.view-2"])
        try await Self.reportViews(secondPort, ["b", "a"], ids: ["page-1.view-1", "page-1.view-2"])
        #expect(try await httpRequest(port: firstPort, "GET", "/carousels/default/banners/a/click").status == 302)
        #expect(try await httpRequest(port: secondPort, "GET", "/carousels/default/banners/a/click").status == 302)
        // The second replica's counts reach the store by its own timer.
        #expect(
            await eventually {
                let totals = try? await Self.totals(firstPort)
                return totals?.views == ["a": 4, "b": 3] && totals?.clicks == ["a": 2, "b": 0]
            })
        #expect(await eventually { (try? await Self.totals(firstPort).plays) ?? 0 >= 4 }, "both saw four plays")
        let totals = try await Self.totals(secondPort)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // Counted twice, the seconds shown would be about twice the time that passed, and the
        // plays (one a second) twice as many.
        #expect(totals.shownSeconds <= seconds, "\(totals) in \(elapsed)")
        #expect(Double(totals.plays) <= seconds + 1, "\(totals) in \(elapsed)")
        for process in [first, second] {
            process.signal(SIGTERM)
            #expect(await process.waitForExit(seconds: 5) == 0)
        }
    }
}
