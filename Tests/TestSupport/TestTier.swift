import Foundation

#if canImport(Testing)
    // Not in the release build, which builds this module too (SwiftPM builds every regular target).
    import Testing
#endif

/// Which tier of the tests runs (docs/TESTING.md). `make test-unit` sets `CAROUSEL_TEST_TIER=unit`:
/// only what needs no socket, no child process and no real clock runs, on a manual clock, in well
/// under a minute. Matrices shrink to what the tier has (`Transport.allCases`, `StoreKind.allCases`),
/// and a test that reaches for what the tier lacks is skipped (cancelled, with the reason), never
/// passed silently.
public enum TestTier {
    public static let isUnit = ProcessInfo.processInfo.environment["CAROUSEL_TEST_TIER"] == "unit"

    /// Skips the calling test in the unit tier: what follows needs `what`. Off the test's own task
    /// (on a thread of `offThePool`) it cannot be skipped, so it fails, saying where to ask first.
    public static func needs(_ what: String) throws {
        guard isUnit else { return }
        #if canImport(Testing)
            guard Test.current != nil else { throw Refusal(what: what) }
            try Test.cancel("needs \(what), which the unit tier has not (make test runs it)")
        #else
            throw Refusal(what: what)
        #endif
    }

    public struct Refusal: Error, CustomStringConvertible {
        let what: String
        public var description: String {
            "\(what) in the unit tier, off the test's task: call TestTier.needs before leaving it"
        }
    }
}
