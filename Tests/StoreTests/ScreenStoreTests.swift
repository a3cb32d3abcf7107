import Carousel
import Store
import Testing
import TimeZones

/// The fleet's rows (docs/SCREENS.md): every store merges sightings by the one rule,
/// `ScreenSighting.merged(into:timeout:)`, checked here against each store and by hand.
@Suite("Store contract: screens")
struct ScreenStoreTests {
    let timeout: Duration = .seconds(30)

    func sighting(
        _ key: ScreenRecord.Key, at offset: Int64, via: ScreenVia = .stream, userAgent: String = "Kiosk/1",
        receipt: JudgedReceipt? = nil, claim: ScreenKey? = nil
    ) -> ScreenSighting {
        ScreenSighting(
            key: key, heardAt: t0 + .seconds(offset), via: via, userAgent: userAgent, receipt: receipt, claim: claim)
    }

    func receipt(_ banner: String, shownAt offset: Int64, _ reason: OutOfStepReason?, arrived: Int64) -> JudgedReceipt {
        JudgedReceipt(
            banner: banner, version: 3, shownAt: t0 + .seconds(offset), lateness: .milliseconds(12), outOfStep: reason,
            verdictSince: t0 + .seconds(arrived), offsetMs: -40, rttMs: 18)
    }

    /// Saves each batch in turn, and checks the store against the rule applied by hand.
    func save(_ batches: [[ScreenSighting]], to store: any CarouselStore) throws -> [ScreenRecord.Key: ScreenRecord] {
        var expected = Dictionary(uniqueKeysWithValues: try store.screens().map { ($0.key, $0) })
        for batch in batches {
            try store.saveScreens(batch, timeout: timeout)
            for sighting in batch {
                expected[sighting.key] = sighting.merged(into: expected[sighting.key], timeout: timeout)
            }
        }
        let stored = Dictionary(uniqueKeysWithValues: try store.screens().map { ($0.key, $0) })
        #expect(stored == expected)
        return stored
    }

    /// The fleet of a store no other process writes keeps rows as the rule made them and writes
    /// them whole: each row as given (receipt, claim and audience or none), replacing the stored
    /// one; a row of a carousel no longer stored is dropped.
    @Test(arguments: StoreKind.allCases)
    func rowsKeptAreWrittenWhole(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let serial = try store.create(lobby, anchor: playing, by: byTests).serial
        let (wall, hall) = (
            ScreenRecord.Key(carousel: serial, id: ScreenID("wall-1")!),
            ScreenRecord.Key(carousel: serial, id: ScreenID("hall-1")!)
        )
        let claimed = sighting(
            wall, at: 5, via: .poll, receipt: receipt("b1", shownAt: 4, .late, arrived: 5),
            claim: ScreenKey("key-of-wall-1-0123456789")!)
        var first = claimed.merged(into: nil, timeout: timeout)
        first.audience = "de"
        let plain = sighting(hall, at: 7).merged(into: nil, timeout: timeout)
        let elsewhere = sighting(ScreenRecord.Key(carousel: serial + 100, id: ScreenID("x")!), at: 7)
            .merged(into: nil, timeout: timeout)
        try store.keepScreens([first, plain, elsewhere])
        var stored = Dictionary(uniqueKeysWithValues: try store.screens().map { ($0.key, $0) })
        #expect(stored == [wall: first, hall: plain])
        // Replaced whole: the receipt, the claim and the audience go with the row given.
        let later = sighting(wall, at: 9).merged(into: nil, timeout: timeout)
        try store.keepScreens([later])
        stored = Dictionary(uniqueKeysWithValues: try store.screens().map { ($0.key, $0) })
        #expect(stored == [wall: later, hall: plain])
    }

    @Test(arguments: StoreKind.allCases)
    func presenceIsTheLatestSightingAndBeginsAgainAfterASilence(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let serial = try store.create(lobby, anchor: playing, by: byTests).serial
        let wall = ScreenRecord.Key(carousel: serial, id: ScreenID("wall-1")!)
        let rows = try save(
            [
                [sighting(wall, at: 0)],
                [sighting(wall, at: 20, via: .poll, userAgent: String(repeating: "x", count: 300))],
                // Another process's older sighting, written late: the latest stays.
                [sighting(wall, at: 10, via: .stream, userAgent: "Old/1")],
            ], to: store)
        #expect(rows[wall]?.lastSeen == t0 + .seconds(20))
        #expect(rows[wall]?.heardSince == t0)
        #expect(rows[wall]?.via == .poll)
        #expect(rows[wall]?.userAgent.count == ScreenRecord.userAgentLimit)
        // Silent for longer than the timeout, then heard again: present since then.
        let back = try save([[sighting(wall, at: 51)]], to: store)
        #expect(back[wall]?.heardSince == t0 + .seconds(51))
    }

    @Test(arguments: StoreKind.allCases)
    func theLatestReceiptIsKeptWithSinceWhenItsVerdictHolds(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let serial = try store.create(lobby, anchor: playing, by: byTests).serial
        let wall = ScreenRecord.Key(carousel: serial, id: ScreenID("wall-1")!)
        let rows = try save(
            [
                [sighting(wall, at: 1, receipt: receipt("a", shownAt: 0, .late, arrived: 1))],
                // The same verdict again: late since the first.
                [sighting(wall, at: 6, receipt: receipt("b", shownAt: 5, .late, arrived: 6))],
                // An older receipt arriving late changes nothing of the receipt.
                [sighting(wall, at: 7, receipt: receipt("a", shownAt: 2, nil, arrived: 7))],
            ], to: store)
        #expect(rows[wall]?.receipt?.banner == "b")
        #expect(rows[wall]?.receipt?.verdictSince == t0 + .seconds(1))
        // In step now: since this receipt.
        let inStep = try save(
            [[sighting(wall, at: 11, receipt: receipt("a", shownAt: 10, nil, arrived: 11))]], to: store)
        #expect(inStep[wall]?.receipt?.outOfStep == nil)
        #expect(inStep[wall]?.receipt?.verdictSince == t0 + .seconds(11))
    }

    @Test(arguments: StoreKind.allCases)
    func screensGoWithTheirCarouselAndAfterTheirRetention(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let stored = try store.create(lobby, anchor: playing, by: byTests)
        let wall = ScreenRecord.Key(carousel: stored.serial, id: ScreenID("wall-1")!)
        let desk = ScreenRecord.Key(carousel: stored.serial, id: ScreenID("desk")!)
        let elsewhere = ScreenRecord.Key(carousel: stored.serial + 100, id: ScreenID("wall-1")!)
        try store.saveScreens(
            [sighting(wall, at: 0), sighting(desk, at: 100), sighting(elsewhere, at: 0)], timeout: timeout)
        #expect(Set(try store.screens().map(\.key)) == [wall, desk])  // no such carousel: dropped
        #expect(try store.forgetScreens(silentSince: t0 + .seconds(50)) == 1)
        #expect(try store.screens().map(\.key) == [desk])
        try store.delete(stored.key, expectedRevision: stored.revision, by: byTests)
        #expect(try store.screens().isEmpty)
    }

    /// The first key a screen is written with claims it; a sighting with another key, or none,
    /// changes nothing of its row, receipt included (another process that lost the race to claim
    /// it, or a stranger), on every store.
    @Test(arguments: StoreKind.allCases)
    func theFirstClaimStandsAndAnotherKeysSightingChangesNothing(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let serial = try store.create(lobby, anchor: playing, by: byTests).serial
        let wall = ScreenRecord.Key(carousel: serial, id: ScreenID("wall-1")!)
        let own = try #require(ScreenKey("own-key-0123456789"))
        let other = try #require(ScreenKey("someone-elses-key"))
        #expect(own.digest.count == 64 && own != other)
        let rows = try save(
            [
                [sighting(wall, at: 0, userAgent: "Old/1")],
                [
                    sighting(
                        wall, at: 1, userAgent: "Kiosk/1", receipt: receipt("a", shownAt: 1, nil, arrived: 1),
                        claim: own)
                ],
                [
                    sighting(
                        wall, at: 2, userAgent: "Intruder", receipt: receipt("b", shownAt: 2, .wrongBanner, arrived: 2),
                        claim: other)
                ],
                [
                    sighting(
                        wall, at: 3, userAgent: "Intruder", receipt: receipt("b", shownAt: 3, .wrongBanner, arrived: 3))
                ],
            ], to: store)
        #expect(
            rows[wall]?.claim == own && rows[wall]?.userAgent == "Kiosk/1" && rows[wall]?.lastSeen == t0 + .seconds(1))
        #expect(rows[wall]?.receipt?.banner == "a" && rows[wall]?.receipt?.outOfStep == nil)
        let later = try save([[sighting(wall, at: 4, userAgent: "Kiosk/2", claim: own)]], to: store)
        #expect(later[wall]?.userAgent == "Kiosk/2" && later[wall]?.claim == own)
    }

    /// Screens forgotten by key (ones that made room, or one an operator forgot) go with their
    /// claims, the audit entry in the same write.
    @Test(arguments: StoreKind.allCases)
    func screensForgottenByKeyGoWithTheirClaims(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let serial = try store.create(lobby, anchor: playing, by: byTests).serial
        let wall = ScreenRecord.Key(carousel: serial, id: ScreenID("wall-1")!)
        let desk = ScreenRecord.Key(carousel: serial, id: ScreenID("desk")!)
        let own = try #require(ScreenKey("own-key-0123456789"))
        try store.saveScreens([sighting(wall, at: 0, claim: own), sighting(desk, at: 0)], timeout: timeout)
        try store.forgetScreens(
            [wall], audit: [AuditEntry(.forgetScreen, byTests, carousel: "lobby", target: "wall-1")])
        #expect(try store.screens().map(\.key) == [desk])
        let entry = try #require(try store.auditLog(AuditQuery()).first?.entry)
        #expect(entry.action == .forgetScreen && entry.carousel == "lobby" && entry.target == "wall-1")
        try store.saveScreens([sighting(wall, at: 1, userAgent: "New/1")], timeout: timeout)
        #expect(try store.screens().first { $0.key == wall }?.claim == nil)
    }
}
