import Testing

@testable import BannerAPI

/// Refused credentials are logged within a budget (docs/OPERATIONS.md), on exact times.
@Suite("Refused credentials in the log")
struct RefusedCredentialsTests {
    let second: UInt64 = 1_000_000_000

    @Test func theFirstLimitOfAWindowAreLoggedTheRestCountedAndToldAtTheNextWindow() {
        let budget = RefusedCredentials(limit: 3, windowNanoseconds: 10 * second)
        let start = 5 * second
        #expect(budget.admit(at: start) == .log(droppedBefore: 0))
        #expect(budget.admit(at: start + 1) == .log(droppedBefore: 0))
        #expect(budget.admit(at: start + 9 * second) == .log(droppedBefore: 0))
        #expect(budget.admit(at: start + 9 * second + 1) == .drop)
        #expect(budget.admit(at: start + 10 * second - 1) == .drop)
        #expect(budget.admit(at: start + 10 * second) == .log(droppedBefore: 2), "a new window says what was dropped")
        #expect(budget.admit(at: start + 10 * second + 1) == .log(droppedBefore: 0), "and says it once")
    }

    @Test func aQuietWindowDropsNothing() {
        let budget = RefusedCredentials(limit: 1, windowNanoseconds: second)
        #expect(budget.admit(at: 0) == .log(droppedBefore: 0))
        #expect(budget.admit(at: 5 * second) == .log(droppedBefore: 0))
        #expect(budget.admit(at: 5 * second + 1) == .drop)
        #expect(budget.admit(at: 60 * second) == .log(droppedBefore: 1))
    }
}
