import Store
import Testing

@testable import BannerAPI

/// Two processes on one store, as replicas on PostgreSQL are (docs/STORE.md, several processes),
/// at the router: a write is decided on what is stored, never on what a process last heard.
@Suite("A store shared by two processes")
struct SharedStoreTests {
    @Test func aCommandOnAReplicaThatHasNotHeardOfAnotherOnesBuildsOnIt() async throws {
        let first = RouterHarness(autoplay: false)
        let second = RouterHarness(replicaOf: first)
        let start = try await first.send("GET", "/banner").json["version"] as? Int ?? 0
        let moved = try await first.send("POST", "/banner/next").json
        #expect(moved["index"] as? Int == 1 && moved["version"] as? Int == start + 1)
        #expect(try await second.send("GET", "/banner").json["index"] as? Int == 0, "it has not heard yet")
        let movedAgain = try await second.send("POST", "/banner/next").json
        #expect(movedAgain["index"] as? Int == 2, "the move is made from where the first replica left it")
        #expect(movedAgain["version"] as? Int == start + 2)
        try await first.parts.follow(.carousel(name: "default"))
        let caughtUp = await first.send("GET", "/banner")
        #expect(caughtUp.text == (await second.send("GET", "/banner")).text)
        #expect(caughtUp.header("ETag") == (await second.send("GET", "/banner")).header("ETag"))
    }

    @Test func anIfMatchIsCheckedAgainstWhatIsStoredNotWhatAReplicaLastHeard() async throws {
        let first = RouterHarness()
        let second = RouterHarness(replicaOf: first)
        let tag = try #require(await first.send("GET", "/carousels/default").header("ETag"))
        let patch = [("Content-Type", "application/merge-patch+json"), ("If-Match", tag)]
        #expect(
            await first.send("PATCH", "/carousels/default", headers: patch, body: #"{"interval": 7}"#).status == 200)
        let stale = await second.send("PATCH", "/carousels/default", headers: patch, body: #"{"interval": 9}"#)
        #expect(stale.status == 412)
        #expect(try first.store.load(named: "default")?.definition.interval == .seconds(7))
    }

    @Test func carouselsCreatedAndDeletedElsewhereAppearAndDisappear() async throws {
        let first = RouterHarness()
        let second = RouterHarness(replicaOf: first)
        #expect(await first.sendJSON("POST", "/carousels", #"{"name": "lobby"}"#).status == 201)
        #expect(await second.send("GET", "/carousels/lobby/banner").status == 404)
        try await second.parts.follow(.carousel(name: "lobby"))
        #expect(await second.send("GET", "/carousels/lobby/banner").status == 200)
        #expect(await first.send("DELETE", "/carousels/lobby").status == 204)
        try await second.parts.follow(.everything)
        #expect(await second.send("GET", "/carousels/lobby/banner").status == 404)
    }

    @Test func readinessIsReportedForTheLoadBalancer() async throws {
        let harness = RouterHarness()
        let ready = await harness.send("GET", "/readyz")
        #expect(ready.status == 200 && ready.text == "{\"status\":\"ready\"}\n")
        #expect(ready.header("Cache-Control") == "no-store")
    }
}
