import Carousel
import Dispatch
import Logging
import Metrics
import Store
import TestSupport
import Testing
import Threading
import TimeZones

@testable import CarouselRuntime
@testable import SQLiteStore

/// Proof of play counted in memory and handed to a store (docs/STATS.md), on a manual clock.
@Suite("Play recorder")
struct PlayRecorderTests {
    static let logger = Logger(label: "test", minimumLevel: .critical)
    /// Carousel 7: three banners, 4 s each, from t0.
    static let carousel = Carousel(banners: sampleBanners(3), interval: .seconds(4), now: t0)

    static func recorder(_ store: any CarouselStore, _ clock: ManualClock) -> PlayRecorder {
        PlayRecorder(
            store: store, flushInterval: .seconds(10), metrics: ServiceMetrics(), logger: logger, clock: clock.read)
    }

    static func advanced(_ state: Carousel, to time: Timestamp) -> Carousel {
        var state = state
        state.advance(to: time)
        return state
    }

    @Test func eachBannerThatBecomesCurrentIsAPlayWithTheSecondsItWasShown() throws {
        let store = MemoryStore()
        let clock = ManualClock(t0)
        let plays = Self.recorder(store, clock)
        plays.observe(Self.carousel, carousel: 7)
        plays.observe(Self.advanced(Self.carousel, to: t0 + .seconds(4)), carousel: 7)
        clock.set(t0 + .seconds(6))
        let records = try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(60))
        #expect(
            records.plays == [
                PlayRecord(carousel: 7, banner: "b0", startedAt: t0, shown: .seconds(4)),
                PlayRecord(carousel: 7, banner: "b1", startedAt: t0 + .seconds(4), shown: .seconds(2)),
            ])
        // Shown for longer by the next flush; a state with the same banner (a pause) is the same play.
        let paused = try Self.advanced(Self.carousel, to: t0 + .seconds(4)).applying(
            .pause(for: nil), at: t0 + .seconds(7))
        plays.observe(paused, carousel: 7)
        clock.set(t0 + .seconds(9))
        #expect(
            try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(60)).plays.last?.shown == .seconds(5))
        plays.end(carousel: 7, at: t0 + .seconds(9))
        plays.flush()
        #expect(try store.stats(of: 7, audience: nil, from: t0, to: t0 + .seconds(60)).plays.count == 2)
    }

    /// A process that finds a banner current (a restart, another replica) goes on with the play
    /// stored for it rather than count a second one.
    @Test func aPlayFoundGoingOnContinuesTheOneStoredForIt() throws {
        let store = MemoryStore()
        let clock = ManualClock(t0 + .seconds(2))
        let before = Self.recorder(store, clock)
        before.observe(Self.carousel, carousel: 7)
        before.flush()
        // Paused at t0 + 3 s: the state now says it changed then, the banner shown since t0.
        let paused = try Self.carousel.applying(.pause(for: nil), at: t0 + .seconds(3))
        before.observe(paused, carousel: 7)
        clock.set(t0 + .seconds(3.5))
        before.flush()
        // Killed; a new process loads the paused state.
        let after = Self.recorder(store, clock)
        after.observe(paused, carousel: 7)
        clock.set(t0 + .seconds(5))
        #expect(
            try after.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(60)).plays == [
                PlayRecord(carousel: 7, banner: "b0", startedAt: t0, shown: .seconds(5))
            ])
    }

    @Test func viewsAndClicksAreCountedInTheQuarterHourOfTheirTime() throws {
        let store = MemoryStore()
        let plays = Self.recorder(store, ManualClock(t0 + .seconds(1000)))
        plays.countViews(
            [
                ReportedView(banner: "b0", at: t0), ReportedView(banner: "b0", at: t0 + .seconds(899)),
                ReportedView(banner: "b1", at: t0 + .seconds(900)),
            ], carousel: 7, audience: nil)
        plays.countClick(banner: "b0", carousel: 7, audience: nil, at: t0 + .seconds(10))
        let quarter = EngagementCount.quarter(of: t0)
        #expect(
            try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(1800)).engagement == [
                EngagementCount(carousel: 7, banner: "b0", quarter: quarter, views: 2, clicks: 1),
                EngagementCount(carousel: 7, banner: "b1", quarter: quarter + 900, views: 1, clicks: 0),
            ])
    }

    /// Views handed over with `storeViews` are in the store when it returns (what a 204 to a
    /// screen then means); a store that refuses the write makes it throw, and a view sent again
    /// after is stored once. Calls from many threads at once are written together.
    @Test func storedViewsAreInTheStoreWhenTheCallReturns() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        let store = try SQLiteStore(path: path, busyTimeout: .milliseconds(50))
        let plays = Self.recorder(store, ManualClock(t0 + .seconds(10)))
        func stored() throws -> Int64? {
            try store.stats(of: 7, audience: nil, from: t0, to: t0 + .seconds(900)).engagement.first?.views
        }
        try plays.storeViews([ReportedView(banner: "b0", at: t0, id: "v-1")], carousel: 7, audience: nil)
        #expect(try stored() == 1)
        let intruder = try SQLiteConnection(path: path)
        try intruder.execute("PRAGMA busy_timeout = 0; BEGIN IMMEDIATE")
        #expect(throws: StoreError.self) {
            try plays.storeViews([ReportedView(banner: "b0", at: t0, id: "v-2")], carousel: 7, audience: nil)
        }
        try intruder.execute("ROLLBACK")
        try plays.storeViews([ReportedView(banner: "b0", at: t0, id: "v-2")], carousel: 7, audience: nil)
        #expect(try stored() == 2)
        let failures = Lock(0)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for view in 0..<25 {
                do {
                    try plays.storeViews(
                        [ReportedView(banner: "b0", at: t0, id: "t\(thread)-\(view)")], carousel: 7, audience: nil)
                } catch {
                    failures.withLock { $0 += 1 }
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(try stored() == 202)
    }

    /// A store that refuses writes (locked by another program) keeps nothing and loses nothing:
    /// the counts wait in memory and are stored once, when it takes writes again.
    @Test func countsAStoreRefusedAreStoredOnceWhenItIsBack() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        let store = try SQLiteStore(path: path, busyTimeout: .milliseconds(50))
        let plays = Self.recorder(store, ManualClock(t0 + .seconds(10)))
        plays.countViews(
            [ReportedView(banner: "b0", at: t0), ReportedView(banner: "b0", at: t0)], carousel: 7, audience: nil)
        // A view with an id, sent again while the store is away (its answer lost): once.
        plays.countViews([ReportedView(banner: "b0", at: t0, id: "v-1")], carousel: 7, audience: nil)
        let intruder = try SQLiteConnection(path: path)
        try intruder.execute("PRAGMA busy_timeout = 0; BEGIN IMMEDIATE")
        #expect(throws: StoreError.self) { try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(900)) }
        plays.countClick(banner: "b0", carousel: 7, audience: nil, at: t0)
        plays.countViews([ReportedView(banner: "b0", at: t0, id: "v-1")], carousel: 7, audience: nil)
        plays.flush()  // refused too
        try intruder.execute("ROLLBACK")
        let quarter = EngagementCount.quarter(of: t0)
        #expect(
            try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(900)).engagement == [
                EngagementCount(carousel: 7, banner: "b0", quarter: quarter, views: 3, clicks: 1)
            ])
        // And once more after it was stored, to this process or another one on the same store.
        plays.countViews([ReportedView(banner: "b0", at: t0, id: "v-1")], carousel: 7, audience: nil)
        let other = Self.recorder(store, ManualClock(t0 + .seconds(20)))
        other.countViews([ReportedView(banner: "b0", at: t0, id: "v-1")], carousel: 7, audience: nil)
        other.flush()
        #expect(try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(900)).engagement.first?.views == 3)
    }

    /// Each audience's screens see their own state (docs/AUDIENCES.md): its plays are its own,
    /// apart from those of screens of no audience; an audience an edit drops ends its play there.
    @Test func eachAudienceHasItsOwnPlays() throws {
        let store = MemoryStore()
        let clock = ManualClock(t0)
        let plays = Self.recorder(store, clock)
        // a for everyone, b for de only; 1 s each.
        let lineup = Lineup(
            banners: [
                Banner(id: "a", image: "https://cdn.example.com/a.png"),
                Banner(id: "b", image: "https://cdn.example.com/b.png", audiences: ["de"]),
            ], interval: .seconds(1))
        var state = Carousel(lineup: lineup, now: t0)
        plays.observe(state, carousel: 7)
        for second in 1...3 {
            state.advance(to: t0 + .seconds(second))
            plays.observe(state, carousel: 7)
        }
        // An edit that names no audience: de's screens see the state of no audience from 3.5 s.
        state.redefine(
            Lineup(banners: [Banner(id: "a", image: "https://cdn.example.com/a.png")], interval: .seconds(1)),
            autoplay: nil, at: t0 + .seconds(3.5))
        plays.observe(state, carousel: 7)
        clock.set(t0 + .seconds(5))
        let de = try plays.records(of: 7, audience: "de", from: t0, to: t0 + .seconds(60)).plays
        #expect(
            de == [
                PlayRecord(carousel: 7, audience: "de", banner: "a", startedAt: t0, shown: .seconds(1)),
                PlayRecord(carousel: 7, audience: "de", banner: "b", startedAt: t0 + .seconds(1), shown: .seconds(1)),
                PlayRecord(carousel: 7, audience: "de", banner: "a", startedAt: t0 + .seconds(2), shown: .seconds(1)),
                PlayRecord(
                    carousel: 7, audience: "de", banner: "b", startedAt: t0 + .seconds(3), shown: .seconds(0.5)),
            ])
        let everyone = try plays.records(of: 7, audience: nil, from: t0, to: t0 + .seconds(60)).plays
        #expect(everyone.map(\.banner) == ["a"], "one banner for screens of no audience: one play")
        #expect(everyone.first?.startedAt == t0)
        #expect(try plays.records(of: 7, audience: "fr", from: t0, to: t0 + .seconds(60)).plays.isEmpty)
    }
}

extension Carousel {
    func applying(_ command: CarouselCommand, at time: Timestamp) throws -> Carousel {
        var changed = self
        try changed.apply(command, at: time)
        return changed
    }
}
