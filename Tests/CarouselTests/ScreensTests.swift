import Carousel
import Testing
import TimeZones

@Suite("Screens")
struct ScreensTests {
    @Test(arguments: ["wall-1", "a", "0", "lobby.screen_2", String(repeating: "x", count: 64)])
    func screenIdsOfTheRuleAreTaken(_ id: String) {
        #expect(ScreenID(id)?.rawValue == id)
    }

    @Test(arguments: [
        "", "-wall", ".wall", "_wall", "Wall", "wall 1", "wall/1", "wäll", String(repeating: "x", count: 65),
    ])
    func otherIdsAreRefused(_ id: String) {
        #expect(ScreenID(id) == nil)
    }

    @Test func offlineOnceSilentForLongerThanTheTimeoutWhateverItsReceipts() {
        let timeout: Duration = .seconds(30)
        func state(silentFor seconds: Int64, _ verdict: StepVerdict?, frozen: Bool = false) -> ScreenState {
            ScreenState.of(
                lastSeen: t0, now: t0 + .seconds(seconds), timeout: timeout, outOfStep: verdict?.outOfStep,
                frozen: frozen)
        }
        #expect(state(silentFor: 30, nil) == .online)
        #expect(state(silentFor: 31, nil) == .offline)
        #expect(state(silentFor: 31, .late(by: .seconds(1))) == .offline)
        #expect(state(silentFor: 0, .inStep(lateness: .zero)) == .online)
        #expect(state(silentFor: 0, .unknown) == .online)
        #expect(state(silentFor: 0, .late(by: .seconds(1))) == .outOfStep(.late))
        #expect(state(silentFor: 0, .early(by: .seconds(1))) == .outOfStep(.early))
        #expect(state(silentFor: 0, .wrongBanner(expected: "b1")) == .outOfStep(.wrongBanner))
        #expect(state(silentFor: 0, .inStep(lateness: .zero), frozen: true) == .outOfStep(.frozen))
        #expect(StepVerdict.early(by: .milliseconds(70)).lateness == .milliseconds(-70))
        #expect(StepVerdict.wrongBanner(expected: "b1").lateness == nil)
        #expect(
            ScreenState.outOfStep(.frozen).name == "out-of-step"
                && OutOfStepReason.wrongBanner.rawValue == "wrong-banner")
    }
}
