import Store
import Testing
import TimeZones

/// Named tokens on every store (docs/TOKENS.md): a name is taken once, the digest is what is
/// kept, deletion says whether there was one.
@Suite("Store tokens")
struct TokenStoreTests {
    @Test(arguments: StoreKind.allCases)
    func aTokenIsSavedOnceListedByNameAndDeleted(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let ci = TokenRecord(
            name: "ci", role: .control, carousels: ["lobby", "hall"], expiresAt: t0 + .seconds(3600), createdAt: t0,
            createdBy: "env:admin", digest: String(repeating: "a", count: 64))
        let audit = TokenRecord(
            name: "audit", role: .stats, carousels: nil, expiresAt: nil, createdAt: t0 + .seconds(1),
            createdBy: "loopback", digest: String(repeating: "b", count: 64))
        #expect(try store.saveToken(ci, by: byTests))
        #expect(try store.saveToken(audit, by: byTests))
        var again = audit
        again = TokenRecord(
            name: "ci", role: .admin, carousels: nil, expiresAt: nil, createdAt: t0, createdBy: "loopback",
            digest: String(repeating: "c", count: 64))
        #expect(try !store.saveToken(again, by: byTests), "the name is taken")
        #expect(try store.tokens() == [audit, ci])

        #expect(try store.deleteToken(named: "ci", by: byTests))
        #expect(try !store.deleteToken(named: "ci", by: byTests))
        #expect(try store.tokens() == [audit])
    }
}
