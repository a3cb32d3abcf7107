import Store
import Testing

/// A screen's key is kept as its SHA-256 (docs/SCREENS.md, "A screen's own reports"); the digests
/// of keys heard lately are remembered, which must never change what a key gives.
@Suite("Screen keys")
struct ScreenKeyTests {
    /// The key is this test's own: its first digest is made, not remembered; every later one must
    /// be the same, remembered or made again.
    @Test func aKeyGivesItsDigestEveryTimeAndPastTheRememberedOnes() throws {
        let first = "remembered-key-0123456789"
        let made = try #require(ScreenKey(first)).digest
        #expect(made.count == 64 && made.allSatisfy(\.isHexDigit))
        #expect(try #require(ScreenKey(first)).digest == made, "the second time, remembered")
        // More keys than are remembered: the first is forgotten, then made again the same.
        let other = try #require(ScreenKey("key-7-0123456789abcdef")).digest
        for number in 0...20_000 { _ = ScreenKey("key-\(number)-0123456789abcdef") }
        #expect(try #require(ScreenKey(first)).digest == made)
        #expect(try #require(ScreenKey("key-7-0123456789abcdef")).digest == other)
        #expect(made != other)
    }

    @Test(arguments: ["short", String(repeating: "a", count: 129), "with space 0123456789", "ünïcödé-0123456789"])
    func whatIsNotAKeyStaysRefused(_ text: String) {
        #expect(ScreenKey(text) == nil)
        #expect(ScreenKey(text) == nil, "nothing remembered for it")
    }
}
