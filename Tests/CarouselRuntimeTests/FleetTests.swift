import Carousel
import Definitions
import Logging
import Store
import TestSupport
import Testing
import Threading
import TimeZones

@testable import CarouselRuntime

/// The fleet on its own (docs/SCREENS.md, "The fleet"): screens heard, written and judged at each
/// tick, on a manual clock; the carousel `lobby` shows b0, b1, b2 for 4 s each from t0.
@Suite("Fleet")
struct FleetTests {
    let clock = ManualClock(t0)
    let store = MemoryStore()
    let runtime: Runtime<RecordingOutlets>
    let told = Lock<[(String, ScreenState)]>([])

    init() throws {
        let definition = CarouselDefinition(name: "lobby", banners: sampleBanners(3))
        let stored = try store.create(definition, anchor: definition.newCarousel(at: t0).anchor, by: byTests)
        runtime = Runtime(
            store: store, loaded: [stored], outlets: RecordingOutlets(),
            logger: Logger(label: "test", minimumLevel: .critical), clock: clock.read, statsFlushInterval: .seconds(10),
            fleet: FleetSettings(maxScreens: 2), beforeFirstLoad: nil)
        runtime.fleet.observe { [told] entry in told.withLock { $0.append((entry.record.id.rawValue, entry.state)) } }
    }

    var lobby: LiveCarousel<RecordingOutlet> { runtime.directory.carousel(named: "lobby")! }
    var fleet: Fleet<RecordingOutlets> { runtime.fleet }

    func state(of id: String) -> ScreenState? {
        fleet.entries(of: "lobby").first { $0.record.id.rawValue == id }?.state
    }

    func at(_ seconds: Double) {
        clock.set(t0 + .milliseconds(Int64((seconds * 1000).rounded())))
    }

    func receipt(_ banner: String, at seconds: Double, version: UInt64 = 1) -> ReportedReceipt {
        ReportedReceipt(
            banner: banner, version: version, shownAt: t0 + .milliseconds(Int64((seconds * 1000).rounded())),
            offsetMs: -3,
            rttMs: 20)
    }

    @Test func aScreenHeardIsOnlineUntilSilentForTheTimeout() throws {
        at(1)
        try fleet.hear(ScreenID("wall-1")!, on: lobby, userAgent: "Kiosk/1", audience: nil)
        fleet.tick()
        let entry = try #require(fleet.entries().first)
        #expect(entry.state == .online && entry.since == t0 + .seconds(1))
        #expect(entry.record.via == .poll && entry.record.userAgent == "Kiosk/1" && entry.carousel == "lobby")
        at(31)
        fleet.tick()
        #expect(state(of: "wall-1") == .online)
        at(31.5)
        fleet.tick()
        #expect(fleet.entries().first?.state == .offline)
        #expect(fleet.entries().first?.since == t0 + .seconds(31))
        #expect(told.withLock { $0.map(\.1) } == [.online, .offline])
    }

    /// On a store no other process reads, a screen's row is kept for the next start (docs/SCREENS.md,
    /// "The fleet"): the list has every word at once; a new screen's row is written at the next
    /// tick, the others' once every 10 ticks (a tenth of the screens at each); what is held is
    /// written when the fleet stops, and a screen forgotten meanwhile is not written back.
    @Test func aRowIsWrittenOnceEveryTenTicksAndWhatIsHeldAtStop() throws {
        let (wall, gone) = (ScreenID("wall-1")!, ScreenID("wall-2")!)
        func stored(_ id: ScreenID) throws -> Timestamp? { try store.screens().first { $0.id == id }?.lastSeen }
        func listed(_ id: ScreenID) -> Timestamp? { fleet.entries().first { $0.record.id == id }?.record.lastSeen }
        at(1)
        try fleet.hear(wall, on: lobby, userAgent: "Kiosk/1", audience: nil)
        fleet.tick()  // the first tick writes what it heard, reads every row back, then keeps them
        #expect(try stored(wall) == t0 + .seconds(1))
        var writes: [Int] = []
        for second in 2...31 {
            at(Double(second))
            try fleet.hear(wall, on: lobby, userAgent: "Kiosk/1", audience: nil)
            let before = try stored(wall)
            fleet.tick()
            #expect(listed(wall) == t0 + .seconds(Int64(second)))
            if try stored(wall) != before { writes.append(second) }
        }
        #expect(writes.count == 3, "written at \(writes)")
        #expect(zip(writes, writes.dropFirst()).allSatisfy { $1 - $0 == 10 }, "written at \(writes)")
        #expect(try stored(wall) == t0 + .seconds(Int64(writes.last ?? 0)))
        at(32)
        try fleet.hear(gone, on: lobby, userAgent: "Kiosk/2", audience: nil)
        fleet.tick()
        #expect(try stored(gone) == t0 + .seconds(32), "a new screen's row: at the next tick")
        at(33)
        try fleet.hear(gone, on: lobby, userAgent: "Kiosk/2", audience: nil)
        #expect(try fleet.forget(gone, of: lobby, by: byTests))
        fleet.tick()
        fleet.stop()
        #expect(try stored(wall) == t0 + .seconds(31), "what was held, written at stop")
        #expect(try stored(gone) == nil, "forgotten: what was heard of it is not written")
    }

    /// A screen heard again after a silence has its row written at the next tick: merged into its
    /// later words before a write, the row would date its return from them.
    @Test func aScreenHeardAgainAfterASilenceIsWrittenAtOnce() throws {
        let wall = ScreenID("wall-1")!
        func heard(at seconds: Double) throws {
            at(seconds)
            try fleet.hear(wall, on: lobby, userAgent: "Kiosk/1", audience: nil)
            fleet.tick()
        }
        try heard(at: 1)
        try heard(at: 2)
        for second in 3...34 {
            at(Double(second))
            fleet.tick()  // silent: offline from 32
        }
        for second in 35...50 { try heard(at: Double(second)) }
        fleet.stop()
        let row = try #require(try store.screens().first { $0.id == wall })
        #expect(row.heardSince == t0 + .seconds(35) && row.lastSeen == t0 + .seconds(50))
        #expect(fleet.entries().first?.record.heardSince == t0 + .seconds(35))
    }

    @Test func receiptsSetTheStateByTheirVerdict() throws {
        let wall = ScreenID("wall-1")!
        at(4.5)
        try fleet.report([receipt("b0", at: 0.01), receipt("b1", at: 4.02)], from: wall, on: lobby, userAgent: nil)
        fleet.tick()
        #expect(state(of: "wall-1") == .online)
        let shown = try #require(fleet.entries().first?.record.receipt)
        #expect(shown.banner == "b1" && shown.lateness == .milliseconds(20) && shown.offsetMs == -3)
        at(8.5)
        try fleet.report([receipt("b2", at: 8.2)], from: wall, on: lobby, userAgent: nil)
        fleet.tick()
        #expect(state(of: "wall-1") == .outOfStep(.late))
        at(9)
        try fleet.report([receipt("b1", at: 8.9)], from: wall, on: lobby, userAgent: nil)  // b2 then, b0 next
        fleet.tick()
        #expect(state(of: "wall-1") == .outOfStep(.wrongBanner))
        at(11.9)
        try fleet.report([receipt("b0", at: 11.9)], from: wall, on: lobby, userAgent: nil)
        fleet.tick()
        #expect(state(of: "wall-1") == .outOfStep(.early))
        #expect(fleet.entries().first?.since == t0 + .milliseconds(11_900))
    }

    /// Receipts sent again (a batch whose answer was lost, receipts queued offline) are measured
    /// once: one for an instant no later than the screen's latest, written or not, is a repeat.
    @Test func aReceiptSentAgainIsMeasuredOnce() throws {
        let wall = ScreenID("wall-1")!
        func measured() -> Int {
            var text = ""
            fleet.writeMetrics(to: &text)
            let line = text.split(separator: "\n").first { $0.hasPrefix("banner_screen_lateness_seconds_count ") }
            return line.flatMap { Int($0.split(separator: " ")[1]) } ?? -1
        }
        at(4.5)
        try fleet.report([receipt("b0", at: 0.01), receipt("b1", at: 4.02)], from: wall, on: lobby, userAgent: nil)
        try fleet.report([receipt("b0", at: 0.01), receipt("b1", at: 4.02)], from: wall, on: lobby, userAgent: nil)
        #expect(measured() == 2)
        fleet.tick()
        at(8.5)
        try fleet.report(
            [receipt("b1", at: 4.02), receipt("b2", at: 8.03), receipt("b2", at: 8.03)], from: wall, on: lobby,
            userAgent: nil)
        #expect(measured() == 3)
        let other = ScreenID("wall-2")!
        try fleet.report([receipt("b2", at: 8.03)], from: other, on: lobby, userAgent: nil)
        #expect(measured() == 4)
    }

    @Test func aScreenWhoseReceiptsStopWhileItIsHeardIsFrozen() throws {
        let wall = ScreenID("wall-1")!
        at(4.1)
        try fleet.report([receipt("b1", at: 4)], from: wall, on: lobby, userAgent: nil)
        fleet.tick()
        // Flips at 8 and 12 unreported: frozen once the grace after the second has passed.
        for seconds in [12.0, 19.9] {
            at(seconds)
            try fleet.hear(wall, on: lobby, userAgent: nil, audience: nil)
            fleet.tick()
            #expect(state(of: "wall-1") == .online)
        }
        at(20.1)
        fleet.tick()
        #expect(state(of: "wall-1") == .outOfStep(.frozen))
        // Flipping again, in step: online since now.
        at(24.1)
        try fleet.report([receipt("b0", at: 24)], from: wall, on: lobby, userAgent: nil)
        fleet.tick()
        #expect(state(of: "wall-1") == .online)
        #expect(fleet.entries().first?.since == t0 + .milliseconds(24_100))
    }

    /// A screen of an audience is frozen when its audience's state changed twice without it
    /// (docs/AUDIENCES.md), whatever screens of no audience see; a screen of no audience is judged
    /// by theirs.
    @Test func aScreenOfAnAudienceIsJudgedFrozenByItsAudiencesChanges() throws {
        // b0 for everyone, b1 for de: screens of no audience show b0 alone, de's b0 and b1 in turn.
        var banners = sampleBanners(2)
        banners[1].audiences = ["de"]
        at(0)
        let shop = try runtime.directory.create(CarouselDefinition(name: "shop", banners: banners), by: tester)
        let (german, plain) = (ScreenID("wall-de")!, ScreenID("wall")!)
        at(4.1)
        try fleet.report([receipt("b1", at: 4)], from: german, on: shop, userAgent: nil, audience: "de")
        try fleet.report([receipt("b0", at: 0)], from: plain, on: shop, userAgent: nil)
        fleet.tick()
        func state(of id: String) -> ScreenState? {
            fleet.entries(of: "shop").first { $0.record.id.rawValue == id }?.state
        }
        #expect(fleet.entries(of: "shop").first { $0.record.id == german }?.record.audience == "de")
        // Heard through its stream from now on, which the fleet hears again as its own (with its
        // audience) every third of the timeout.
        _ = try fleet.hold(german, on: shop, userAgent: nil, audience: "de")
        // de flips at 8 and 12 unreported: frozen once the grace after the second has passed.
        for seconds in [12.0, 19.9, 20.1] {
            at(seconds)
            try fleet.hear(plain, on: shop, userAgent: nil, audience: nil)
            fleet.tick()
            #expect(state(of: "wall") == .online, "b0 is all screens of no audience have been shown")
        }
        #expect(fleet.entries(of: "shop").first { $0.record.id == german }?.record.audience == "de")
        #expect(state(of: "wall-de") == .outOfStep(.frozen))
    }

    @Test(arguments: [
        ("receipts[1].banner", ReportedReceipt(banner: "nope", version: 1, shownAt: t0, offsetMs: nil, rttMs: nil)),
        ("receipts[1].version", ReportedReceipt(banner: "b0", version: 99, shownAt: t0, offsetMs: nil, rttMs: nil)),
        (
            "receipts[1].shownAt",
            ReportedReceipt(banner: "b0", version: 1, shownAt: t0 + .seconds(3602), offsetMs: nil, rttMs: nil)
        ),
    ])
    func anImpossibleReceiptIsRefusedNamingItAndNothingIsKept(_ field: String, _ bad: ReportedReceipt) throws {
        at(1)
        #expect {
            try fleet.report([receipt("b0", at: 0), bad], from: ScreenID("wall-1")!, on: lobby, userAgent: nil)
        } throws: { error in
            guard case .invalidReceipt(let named, _) = error as? ScreenRefusal else { return false }
            return named == field
        }
        fleet.tick()
        #expect(fleet.entries().isEmpty)
    }

    @Test func aNewScreenPastTheLimitIsRefusedAndKnownOnesGoOn() throws {
        let (first, second, third) = (ScreenID("a")!, ScreenID("b")!, ScreenID("c")!)
        try fleet.hear(first, on: lobby, userAgent: nil, audience: nil)
        let stream = try fleet.hold(second, on: lobby, userAgent: "TV", audience: nil)
        #expect(throws: ScreenRefusal.full(carousel: "lobby", limit: 2)) {
            try fleet.hear(third, on: lobby, userAgent: nil, audience: nil)
        }
        fleet.tick()
        #expect(throws: ScreenRefusal.full(carousel: "lobby", limit: 2)) {
            try fleet.report([], from: third, on: lobby, userAgent: nil)
        }
        try fleet.hear(first, on: lobby, userAgent: nil, audience: nil)
        #expect(fleet.entries().map(\.record.id) == [first, second])
        // A stream held is heard for as long as it is, and silent from its end.
        at(100)
        fleet.tick()
        #expect(state(of: "a") == .offline && state(of: "b") == .online)
        #expect(fleet.entries().first { $0.record.id == second }?.record.via == .stream)
        fleet.release(stream)
        at(131)
        fleet.tick()
        #expect(state(of: "b") == .offline)
    }
}

/// Who makes room past `maxScreens`, and screens' claims (docs/SCREENS.md, "Limits" and "A
/// screen's own reports"): the fleet of `FleetTests`, two screens at most.
extension FleetTests {
    /// Ids made up by a stranger must not keep real screens out: past `maxScreens`, the screen
    /// heard from longest ago makes room for a new one once it is offline; while every screen is
    /// online a new one is not tracked.
    @Test func anOfflineScreenMakesRoomForANewOnePastTheLimit() throws {
        let (a, b, c, d) = (ScreenID("a")!, ScreenID("b")!, ScreenID("c")!, ScreenID("d")!)
        at(1)
        try fleet.hear(a, on: lobby, userAgent: nil, audience: nil)
        at(2)
        try fleet.hear(b, on: lobby, userAgent: nil, audience: nil)
        fleet.tick()
        #expect(throws: ScreenRefusal.full(carousel: "lobby", limit: 2)) {
            try fleet.hear(c, on: lobby, userAgent: nil, audience: nil)
        }
        at(32)  // a is offline (heard at 1), b online (heard at 2; the edge is online)
        fleet.tick()
        try fleet.hear(c, on: lobby, userAgent: "New/1", audience: nil)
        #expect(throws: ScreenRefusal.full(carousel: "lobby", limit: 2)) {
            try fleet.hear(d, on: lobby, userAgent: nil, audience: nil)
        }
        fleet.tick()
        #expect(fleet.entries().map(\.record.id) == [b, c])
        #expect(try store.screens().map(\.id.rawValue).sorted() == ["b", "c"])
        // The screen that made room is a new one when it is back, and takes the place of b, offline now.
        at(33)
        fleet.tick()
        try fleet.hear(a, on: lobby, userAgent: "Back/1", audience: nil)
        fleet.tick()
        #expect(fleet.entries().map(\.record.id) == [a, c])
        #expect(try store.screens().map(\.id.rawValue).sorted() == ["a", "c"])
        #expect(fleet.entries().first?.record.heardSince == t0 + .seconds(33))
    }

    /// The first key a screen is heard with claims it: without that key a poll, a stream or a
    /// receipt changes nothing (a stranger cannot put it out of step, nor take its user agent or
    /// audience); an operator forgetting the screen lets a new key claim it.
    @Test func theFirstKeyAScreenIsHeardWithClaimsIt() throws {
        let wall = ScreenID("wall-1")!
        let own = try #require(ScreenKey("own-key-0123456789"))
        let other = try #require(ScreenKey("someone-elses-key"))
        let refused = ScreenRefusal.claimed(carousel: "lobby", screen: wall)
        at(1)
        try fleet.hear(wall, on: lobby, userAgent: "Kiosk/1", audience: nil, screenKey: own)
        fleet.tick()
        at(4.1)
        try fleet.report([receipt("b1", at: 4.01)], from: wall, on: lobby, userAgent: "Kiosk/1", screenKey: own)
        for key in [nil, other] {
            #expect(throws: refused) {
                try fleet.report(
                    [receipt("b2", at: 4.05)], from: wall, on: lobby, userAgent: "Intruder", screenKey: key)
            }
            #expect(throws: refused) {
                try fleet.hear(wall, on: lobby, userAgent: "Intruder", audience: "night", screenKey: key)
            }
            #expect(throws: refused) {
                try fleet.hold(wall, on: lobby, userAgent: "Intruder", audience: "night", screenKey: key)
            }
        }
        fleet.tick()
        let entry = try #require(fleet.entries().first)
        #expect(entry.state == .online && entry.record.claim == own)
        #expect(entry.record.userAgent == "Kiosk/1" && entry.record.audience == nil)
        #expect(entry.record.receipt?.banner == "b1" && entry.record.receipt?.outOfStep == nil)
        #expect(try store.screens().first?.claim == own)

        #expect(try fleet.forget(wall, of: lobby, by: byTests))
        #expect(fleet.entries().isEmpty)
        #expect(try store.screens().isEmpty)
        #expect(try store.auditLog(AuditQuery()).first?.entry.action == .forgetScreen)
        #expect(try !fleet.forget(wall, of: lobby, by: byTests))
        at(5)
        try fleet.hear(wall, on: lobby, userAgent: "Kiosk/2", audience: nil, screenKey: other)
        fleet.tick()
        #expect(fleet.entries().first?.record.claim == other)
        #expect(throws: refused) { try fleet.hear(wall, on: lobby, userAgent: nil, audience: nil, screenKey: own) }
    }

    /// A screen heard without a key is open to all until a key claims it: clients of an earlier
    /// version go on as they were.
    @Test func aScreenHeardWithoutAKeyIsOpenUntilAKeyClaimsIt() throws {
        let wall = ScreenID("wall-1")!
        let own = try #require(ScreenKey("own-key-0123456789"))
        at(1)
        try fleet.hear(wall, on: lobby, userAgent: "Old/1", audience: nil)
        fleet.tick()
        at(2)
        try fleet.hear(wall, on: lobby, userAgent: "Old/2", audience: nil)
        fleet.tick()
        #expect(fleet.entries().first?.record.userAgent == "Old/2" && fleet.entries().first?.record.claim == nil)
        at(3)
        try fleet.hear(wall, on: lobby, userAgent: "New/1", audience: nil, screenKey: own)
        #expect(throws: ScreenRefusal.claimed(carousel: "lobby", screen: wall)) {
            try fleet.hear(wall, on: lobby, userAgent: "Old/3", audience: nil)
        }
        fleet.tick()
        #expect(fleet.entries().first?.record.userAgent == "New/1" && fleet.entries().first?.record.claim == own)
    }
}
