import Store
import TestSupport
import Testing
import TimeZones

@testable import BannerAPI

/// Whether what a named token asked for earlier may still be made in its name (a scheduled
/// change at its time, docs/SCHEDULED.md), on exact times.
@Suite("A token's standing at a scheduled change's time")
struct TokenStandingTests {
    static func token(_ harness: RouterHarness, _ body: String) async throws {
        let created = await harness.sendJSON("POST", "/tokens", body)
        #expect(created.status == 201, "\(created.text)")
    }

    @Test func aChangeStandsWhileItsTokenMayAndNoLongerOnceItIsRevokedExpiredOrNarrowed() async throws {
        let harness = RouterHarness()
        #expect(await harness.sendJSON("POST", "/carousels", AdminAPITests.lobby).status == 201)
        try await Self.token(harness, #"{"name": "planner", "role": "admin"}"#)
        try await Self.token(harness, #"{"name": "temp", "role": "admin", "expiresAt": "2026-12-01T01:00:00Z"}"#)
        try await Self.token(harness, #"{"name": "lobby-only", "role": "admin", "carousels": ["lobby"]}"#)
        try await Self.token(harness, #"{"name": "kiosk", "role": "control"}"#)
        let asked = harness.clock.read()
        let access = harness.api.access
        let standing = { (actor: String) in
            access.withdrawn(Requester(actor: actor), askedAt: asked, carousel: "default")
        }
        #expect(standing("planner") == nil)
        #expect(standing("temp") == nil, "before its expiry")
        #expect(standing("env:admin") == nil, "the environment's admin token is the operator's")
        #expect(standing("loopback") == nil)
        #expect(standing("lobby-only") == "the token 'lobby-only' is for the carousels lobby only, not 'default'")
        #expect(standing("kiosk") == "the token 'kiosk' has the control role; this request needs the admin role")

        harness.clock.set(Timestamp(rfc3339: "2026-12-01T01:00:00Z")!)
        #expect(standing("temp")?.hasPrefix("the token 'temp' expired at 2026-12-01T01:00:00") == true)
        #expect(standing("planner") == nil)

        #expect(await harness.send("DELETE", "/tokens/planner").status == 204)
        #expect(standing("planner") == "the token 'planner' that asked for it was revoked")
        try await Self.token(harness, #"{"name": "planner", "role": "admin"}"#)
        #expect(
            standing("planner") == "the token 'planner' that asked for it was revoked",
            "another token under its name since is not the one that asked")
        #expect(standing("nobody") == "the token 'nobody' that asked for it was revoked")
    }
}
