import Digest
import Testing

/// UUIDs as text: random ones of version 4, and the one a name always gives (version 5's layout).
@Suite("UUID text")
struct UUIDTextTests {
    static func check(_ id: String, version: Character) {
        #expect(id.split(separator: "-").map(\.count) == [8, 4, 4, 4, 12] && id == id.lowercased())
        #expect(Array(id)[14] == version && "89ab".contains(Array(id)[19]))
    }

    /// Past several draws of the kernel's bytes (256 ids a draw), from two tasks at once.
    @Test func randomOnesAreVersionFourAndDiffer() async {
        let ids = await withTaskGroup(of: [String].self) { group in
            for _ in 0..<2 { group.addTask { (0..<700).map { _ in UUIDText.random() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(ids.count == 1400 && Set(ids).count == 1400)
        for id in ids { Self.check(id, version: "4") }
    }

    @Test func aNameAlwaysGivesTheSameOne() {
        let id = UUIDText.named("screen 3 wall-1 screen.offline 1795982400000000000")
        Self.check(id, version: "5")
        #expect(id == UUIDText.named("screen 3 wall-1 screen.offline 1795982400000000000"))
        #expect(id != UUIDText.named("screen 3 wall-1 screen.offline 1795982400000000001"))
        // SHA-256 of "abc" (FIPS 180-4) begins ba7816bf 8f01 cfea 4141 40de 5dae…
        #expect(UUIDText.named("abc") == "ba7816bf-8f01-5fea-8141-40de5dae2223")
    }
}
