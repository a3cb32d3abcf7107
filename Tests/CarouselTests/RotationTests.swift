import Carousel
import Testing
import TimeZones

/// 10:00:00 UTC on Monday 2026-11-30, where the rotation tests start.
let ten = utc("2026-11-30T10:00:00Z")

func clock(_ seconds: Double) -> Timestamp { ten + .seconds(seconds) }

func banner(_ id: String, _ schedule: Schedule = .always) -> Banner {
    Banner(id: id, image: "https://cdn.example.com/\(id).png", schedule: schedule)
}

/// A carousel of `banners` (4 s interval, UTC) playing from 10:00:00.
func scheduled(_ banners: [Banner], fallback: String? = nil, timeZone: ZoneRules = .utc) -> Carousel {
    Carousel(
        lineup: Lineup(banners: banners, interval: .seconds(4), timeZone: timeZone, fallback: fallback), now: ten)
}

@Suite("The rotation")
struct RotationTests {
    @Test func theRotationIsTheEligibleBannersInListOrder() {
        let carousel = scheduled([
            banner("a"), banner("off", Schedule(enabled: false)), banner("later", Schedule(startsAt: clock(60))),
            banner("c"),
        ])
        #expect(carousel.rotationIDs == ["a", "c"])
        #expect(carousel.count == 2)
        #expect(carousel.index == 0)
        #expect(carousel.nextBanner?.id == "c")
        #expect(carousel.previousBanner?.id == "c")
    }

    @Test func theCurrentBannerLeavingGivesWayToTheNextWithAFullCountdown() {
        var carousel = scheduled([banner("a"), banner("b", Schedule(endsAt: clock(5))), banner("c")])
        carousel.advance(to: clock(4))
        #expect(carousel.currentBanner?.id == "b")
        #expect(carousel.version == 2)
        carousel.advance(to: clock(5))
        #expect(carousel.currentBanner?.id == "c")
        #expect(carousel.rotationIDs == ["a", "c"])
        #expect(carousel.index == 1)
        #expect(carousel.nextAdvanceAt == clock(9), "a full countdown from the boundary")
        #expect(carousel.version == 3)
        #expect(carousel.changedAt == clock(5))
    }

    @Test func theCurrentBannerStaysWhenAnotherLeavesOrJoinsItsCountdownUntouched() {
        var carousel = scheduled([
            banner("a"), banner("b", Schedule(endsAt: clock(2))), banner("c"),
            banner("d", Schedule(startsAt: clock(3))),
        ])
        carousel.advance(to: clock(2))
        #expect(carousel.currentBanner?.id == "a")
        #expect(carousel.rotationIDs == ["a", "c"])
        #expect(carousel.nextAdvanceAt == clock(4))
        #expect(carousel.version == 2, "a rotation change is a state change")
        carousel.advance(to: clock(3))
        #expect(carousel.rotationIDs == ["a", "c", "d"])
        #expect(carousel.nextAdvanceAt == clock(4))
        carousel.advance(to: clock(4))
        #expect(carousel.currentBanner?.id == "c", "b is gone")
        carousel.advance(to: clock(8))
        #expect(carousel.currentBanner?.id == "d")
        carousel.advance(to: clock(12))
        #expect(carousel.currentBanner?.id == "a")
        #expect(carousel.version == 6)
    }

    @Test func aBannerAloneThatIsJoinedGivesWayAtOnceWhenItsTimeIsLongPast() {
        var carousel = scheduled([banner("a"), banner("b", Schedule(startsAt: clock(60)))])
        carousel.advance(to: clock(59))
        #expect(carousel.currentBanner?.id == "a")
        #expect(carousel.nextAdvanceAt == nil, "alone, it does not advance")
        #expect(carousel.version == 1)
        carousel.advance(to: clock(60))
        #expect(carousel.currentBanner?.id == "b", "a has shown for a minute: b's turn at once")
        #expect(carousel.nextAdvanceAt == clock(64))
        #expect(carousel.version == 2, "one change: b joined and became current at the same instant")
    }

    @Test func anEmptyRotationShowsTheFallbackWhateverItsSchedule() throws {
        var carousel = scheduled(
            [banner("a", Schedule(endsAt: clock(2))), banner("night", Schedule(enabled: false))], fallback: "night")
        carousel.advance(to: clock(2))
        #expect(carousel.currentBanner?.id == "night")
        #expect(carousel.rotationIDs == ["night"])
        #expect(carousel.index == 0 && carousel.count == 1)
        #expect(carousel.nextAdvanceAt == nil)
        try carousel.apply(.next, at: clock(3))
        #expect(carousel.currentBanner?.id == "night", "one banner: next stays")
    }

    @Test func anEmptyRotationWithoutFallbackIsTheNoBannersState() {
        var carousel = scheduled([banner("a", Schedule(endsAt: clock(2))), banner("b", Schedule(startsAt: clock(10)))])
        carousel.advance(to: clock(2))
        #expect(carousel.currentBanner == nil && carousel.index == nil && carousel.count == 0)
        #expect(throws: CarouselError.noBanners) { try carousel.apply(.next, at: clock(3)) }
        carousel.advance(to: clock(10))
        #expect(carousel.currentBanner?.id == "b")
        #expect(carousel.nextAdvanceAt == nil)
    }

    @Test func movesGoThroughTheRotationOnly() throws {
        var carousel = scheduled([banner("a"), banner("off", Schedule(enabled: false)), banner("c"), banner("d")])
        try carousel.apply(.next, at: clock(1))
        #expect(carousel.currentBanner?.id == "c")
        try carousel.apply(.previous, at: clock(1))
        try carousel.apply(.previous, at: clock(1))
        #expect(carousel.currentBanner?.id == "d")
        try carousel.apply(.jump(to: 1), at: clock(1))
        #expect(carousel.currentBanner?.id == "c")
        #expect(throws: CarouselError.indexOutOfRange(index: 3, count: 3)) {
            try carousel.apply(.jump(to: 3), at: clock(1))
        }
    }

    @Test func aPausedCarouselStillFollowsTheSchedule() throws {
        var carousel = scheduled([banner("a", Schedule(endsAt: clock(5))), banner("b"), banner("c")])
        try carousel.apply(.pause(for: nil), at: clock(1))
        carousel.advance(to: clock(30))
        #expect(carousel.currentBanner?.id == "b", "a left; paused, nothing else moves")
        #expect(carousel.nextAdvanceAt == nil)
    }

    @Test func anEditKeepsTheCurrentBannerOnlyWhileItIsEligible() {
        var carousel = scheduled([banner("a"), banner("b"), banner("c")])
        carousel.advance(to: clock(5))  // b since 4
        carousel.redefine(
            Lineup(banners: [banner("a"), banner("b"), banner("c")], interval: .seconds(4)), autoplay: nil, at: clock(6)
        )
        #expect(carousel.currentBanner?.id == "b" && carousel.nextAdvanceAt == clock(8))
        carousel.redefine(
            Lineup(banners: [banner("a"), banner("b", Schedule(enabled: false)), banner("c")], interval: .seconds(4)),
            autoplay: nil, at: clock(7))
        #expect(carousel.currentBanner?.id == "c", "b switched off: the next in list order")
        #expect(carousel.nextAdvanceAt == clock(11))
    }

    /// The state at a time is a pure function of the lineup, the anchor and the time (docs/STORE.md):
    /// one catch-up over a day of windows equals a step at every change, and a carousel restored
    /// from an anchor taken anywhere on the way goes on exactly as the original.
    @Test func oneCatchUpEqualsEveryStepAndAnAnchorRestoresItAnywhere() throws {
        let lineup = Lineup(
            banners: [
                banner("a"), banner("b", Schedule(windows: [window("10:03", "10:17"), window("11:00", "11:01")])),
                banner("c", Schedule(startsAt: clock(1800), endsAt: clock(5000))),
                Banner(
                    id: "d", image: "https://cdn.example.com/d.png", duration: .seconds(7),
                    schedule: Schedule(windows: [window("10:20", "13:00")])),
            ], interval: .seconds(3), timeZone: zone("Europe/Berlin"))
        var stepped = Carousel(lineup: lineup, now: ten)
        try stepped.apply(.pause(for: .seconds(100)), at: clock(500))
        var oneGo = stepped
        let end = clock(4 * 3600)
        var restored: [Carousel] = []
        while let due = stepped.nextChangeAt, due <= end {
            stepped.advance(to: due)
            if restored.count < 20, stepped.version % 41 == 0 {
                restored.append(Carousel(lineup: lineup, anchor: stepped.anchor))
            }
        }
        oneGo.advance(to: end)
        stepped.advance(to: end)
        #expect(oneGo == stepped)
        #expect(oneGo.version == stepped.version)
        #expect(restored.count == 20)
        for var copy in restored {
            copy.advance(to: end)
            #expect(copy == stepped)
        }
    }
}

@Suite("Takeovers")
struct TakeoverTests {
    let promo = banner("promo")

    @Test func aTimedTakeoverHoldsEveryScreenThenThePreviousBannerReturnsWithAFullCountdown() throws {
        var carousel = scheduled([banner("a"), banner("b"), banner("c")])
        try carousel.apply(.startTakeover(banner: promo, duration: .seconds(10)), at: clock(1))
        #expect(carousel.currentBanner?.id == "promo")
        #expect(carousel.takeover == Carousel.Takeover(banner: promo, until: clock(11), frozenAt: clock(1)))
        #expect(carousel.nextAdvanceAt == nil && carousel.nextBanner == nil && carousel.previousBanner == nil)
        #expect(carousel.index == 0 && carousel.count == 3, "the rotation is frozen behind it")
        #expect(carousel.nextChangeAt == clock(11))
        for move: CarouselCommand in [.next, .previous, .jump(to: 1)] {
            #expect(throws: CarouselError.takeoverInProgress(bannerID: "promo")) {
                try carousel.apply(move, at: clock(2))
            }
        }
        carousel.advance(to: clock(10.999))
        #expect(carousel.currentBanner?.id == "promo")
        carousel.advance(to: clock(11))
        #expect(carousel.takeover == nil)
        #expect(carousel.currentBanner?.id == "a")
        #expect(carousel.nextAdvanceAt == clock(15))
        #expect(carousel.version == 3)
    }

    @Test func anOpenEndedTakeoverLastsUntilEndedAndEndingTwiceIsNothing() throws {
        var carousel = scheduled([banner("a"), banner("b")])
        try carousel.apply(.startTakeover(banner: promo, duration: nil), at: clock(1))
        #expect(carousel.nextChangeAt == nil)
        carousel.advance(to: clock(3600))
        #expect(carousel.currentBanner?.id == "promo")
        try carousel.apply(.endTakeover, at: clock(3600))
        #expect(carousel.currentBanner?.id == "a")
        #expect(carousel.nextAdvanceAt == clock(3604))
        let version = carousel.version
        try carousel.apply(.endTakeover, at: clock(3601))
        #expect(carousel.version == version)
    }

    @Test func endedEarlyTheScheduledEndDoesNothing() throws {
        var carousel = scheduled([banner("a"), banner("b")])
        try carousel.apply(.startTakeover(banner: promo, duration: .seconds(10)), at: clock(1))
        try carousel.apply(.endTakeover, at: clock(5))
        #expect(carousel.nextAdvanceAt == clock(9))
        carousel.advance(to: clock(11))
        #expect(carousel.currentBanner?.id == "b")
        #expect(carousel.nextAdvanceAt == clock(13))
    }

    @Test func aBoundaryDuringTheTakeoverTakesEffectWhenItEnds() throws {
        var carousel = scheduled([banner("a", Schedule(endsAt: clock(5))), banner("b"), banner("c")])
        try carousel.apply(.startTakeover(banner: promo, duration: .seconds(10)), at: clock(1))
        carousel.advance(to: clock(6))
        #expect(carousel.rotationIDs == ["a", "b", "c"], "frozen")
        #expect(carousel.version == 2)
        carousel.advance(to: clock(11))
        #expect(carousel.currentBanner?.id == "b", "a's time ran out meanwhile: the next in list order")
        #expect(carousel.rotationIDs == ["b", "c"])
        #expect(carousel.nextAdvanceAt == clock(15))
    }

    @Test func pausingUnderATakeoverIsKeptForWhenItEnds() throws {
        var carousel = scheduled([banner("a"), banner("b")])
        try carousel.apply(.startTakeover(banner: promo, duration: .seconds(10)), at: clock(1))
        try carousel.apply(.pause(for: nil), at: clock(2))
        carousel.advance(to: clock(20))
        #expect(carousel.currentBanner?.id == "a" && carousel.isPaused && carousel.nextAdvanceAt == nil)
    }

    @Test func aTakeoverOfNoLengthOrLongerThanAYearIsRefused() {
        var carousel = scheduled([banner("a")])
        #expect(throws: CarouselError.takeoverDurationOutOfRange(.zero)) {
            try carousel.apply(.startTakeover(banner: promo, duration: .zero), at: clock(1))
        }
        #expect(carousel.takeover == nil)
    }

    @Test func aTakeoverReplacingAnotherKeepsTheRotationFrozenWhenTheFirstBegan() throws {
        let lineup = Lineup(banners: [banner("a", Schedule(endsAt: clock(5))), banner("b")], interval: .seconds(4))
        var carousel = Carousel(lineup: lineup, now: ten)
        try carousel.apply(.startTakeover(banner: promo, duration: nil), at: clock(1))
        try carousel.apply(.startTakeover(banner: banner("alert"), duration: .seconds(60)), at: clock(10))
        #expect(carousel.currentBanner?.id == "alert")
        #expect(carousel.rotationIDs == ["a", "b"], "still the rotation of 10:00:01")
        #expect(Carousel(lineup: lineup, anchor: carousel.anchor) == carousel)
    }

    @Test func anAnchorUnderATakeoverRestoresTheFrozenRotation() throws {
        let lineup = Lineup(banners: [banner("a", Schedule(endsAt: clock(5))), banner("b")], interval: .seconds(4))
        var carousel = Carousel(lineup: lineup, now: ten)
        try carousel.apply(.startTakeover(banner: promo, duration: .seconds(60)), at: clock(1))
        try carousel.apply(.pause(for: .seconds(2)), at: clock(30))
        let restored = Carousel(lineup: lineup, anchor: carousel.anchor)
        #expect(restored == carousel)
        #expect(restored.rotationIDs == ["a", "b"])
    }
}

@Suite("The timeline")
struct TimelineTests {
    /// What the timeline plans is what the carousel then does, on Berlin's spring-forward day:
    /// each entry's state is what a catch-up to its time shows, and nothing changes in between.
    @Test func theTimelineIsWhatTheCarouselThenDoesOverADay() {
        let start = utc("2026-03-28T23:00:00Z")  // midnight in Berlin
        let lineup = Lineup(
            banners: [
                banner("a"),
                banner("early", Schedule(windows: [window("02:30", "04:00")])),
                banner("weekday", Schedule(windows: [window("06:00", "10:30", days: [0, 1, 2, 3, 4])])),
                banner("sunday", Schedule(windows: [window("09:00", "18:00", days: [6])])),
                banner("sale", Schedule(startsAt: utc("2026-03-29T12:00:00+02:00"))),
                banner("night", Schedule(windows: [window("22:00", "06:00")])),
            ], interval: .seconds(600), timeZone: zone("Europe/Berlin"))
        let carousel = Carousel(lineup: lineup, now: start)
        let entries = carousel.plan(from: start, limit: Carousel.timelineLimit, before: nil).entries
        let dayEnd = utc("2026-03-29T22:00:00Z")
        let today = entries.filter { $0.at < dayEnd }
        #expect(today.count > 100)
        var previous = carousel
        for entry in today {
            var before = carousel
            before.advance(to: entry.at + .nanoseconds(-1))
            #expect(before.currentBanner == previous.currentBanner && before.index == previous.index)
            var after = carousel
            after.advance(to: entry.at)
            #expect(after.currentBanner == entry.banner && after.index == entry.index && after.count == entry.count)
            previous = after
        }
        let joined = today.firstIndex { $0.at == utc("2026-03-29T01:00:00Z") }
        #expect(
            joined.map { today[$0].count == today[$0 - 1].count + 1 } == true,
            "02:30 does not exist: early joins at 03:00 CEST")
        #expect(today.contains { $0.banner?.id == "sunday" })
        #expect(!today.contains { $0.banner?.id == "weekday" })
        #expect(carousel.plan(from: start, limit: 5, before: nil).entries.count == 5)
    }

    @Test func nothingPlannedWhilePausedOrUnderAnOpenEndedTakeover() throws {
        var carousel = scheduled([banner("a"), banner("b")])
        try carousel.apply(.pause(for: nil), at: clock(1))
        #expect(carousel.plan(from: clock(1), limit: 100, before: nil).entries.isEmpty)
        try carousel.apply(.resume, at: clock(2))
        try carousel.apply(.startTakeover(banner: banner("promo"), duration: nil), at: clock(2))
        #expect(carousel.plan(from: clock(2), limit: 100, before: nil).entries.isEmpty)
    }

    /// A plan for a span: the changes before its end, and `until` saying how far they go.
    @Test func aPlanCoversItsSpanUnlessTheLimitEndsItFirst() throws {
        var carousel = scheduled([banner("a"), banner("b")])  // 4 s each from `ten`
        let span = carousel.plan(from: clock(1), limit: 100, before: clock(17))
        #expect(span.entries.map(\.at) == [clock(4), clock(8), clock(12), clock(16)])
        #expect(span.until == clock(17))
        let exactEnd = carousel.plan(from: clock(1), limit: 100, before: clock(16))
        #expect(exactEnd.entries.map(\.at) == [clock(4), clock(8), clock(12)] && exactEnd.until == clock(16))
        let cut = carousel.plan(from: clock(1), limit: 2, before: clock(17))
        #expect(cut.entries.map(\.at) == [clock(4), clock(8)] && cut.until == clock(8))
        #expect(carousel.plan(from: clock(1), limit: 4, before: clock(17)).until == clock(17), "the limit just met")
        try carousel.apply(.pause(for: nil), at: clock(1))
        let paused = carousel.plan(from: clock(2), limit: 100, before: clock(3600))
        #expect(paused.entries.isEmpty && paused.until == clock(3600), "nothing planned: complete to the end")
    }

    /// Scheduled changes of the definition (docs/SCHEDULED.md) in a plan: each an entry of its own,
    /// the rotation after it the edited one's, and a paused carousel's plan going on past one.
    @Test func plannedRedefinitionsAreEntriesAndTheRotationFollowsThem() throws {
        var carousel = scheduled([banner("a"), banner("b")])  // 4 s each from `ten`
        var captioned = banner("b")
        captioned.caption = "new"
        let edited = Lineup(banners: [banner("a"), captioned, banner("c")], interval: .seconds(4), timeZone: .utc)
        let redefinitions = [
            PlannedRedefinition(at: clock(6), change: 7) { $0.redefine(edited, autoplay: nil, at: $1) },
            PlannedRedefinition(at: clock(13), change: 8) { $0.redefine(edited, autoplay: false, at: $1) },
        ]
        let plan = carousel.plan(from: clock(1), limit: 100, before: clock(60), redefinitions: redefinitions)
        #expect(plan.entries.map(\.at) == [clock(4), clock(6), clock(8), clock(12), clock(13)])
        #expect(plan.entries.map { $0.banner?.id } == ["b", "b", "c", "a", "a"])
        #expect(plan.entries.map(\.change) == [nil, 7, nil, nil, 8])
        #expect(plan.entries[1].banner?.caption == "new" && plan.entries[1].count == 3, "b kept, its countdown too")
        #expect(plan.until == clock(60), "paused at 13: nothing more planned")

        #expect(
            carousel.plan(from: clock(6), limit: 100, before: clock(9), redefinitions: redefinitions).entries.map(\.at)
                == [clock(8)], "a change due now is being made: not planned again")
        try carousel.apply(.pause(for: nil), at: clock(1))
        let paused = carousel.plan(from: clock(1), limit: 100, before: clock(60), redefinitions: [redefinitions[0]])
        #expect(paused.entries.map(\.at) == [clock(6)], "an edit of a paused carousel leaves it paused")
        let unpausing = PlannedRedefinition(at: clock(6), change: 9) { $0.redefine(edited, autoplay: true, at: $1) }
        let resumed = carousel.plan(from: clock(1), limit: 100, before: clock(15), redefinitions: [unpausing])
        #expect(resumed.entries.map(\.at) == [clock(6), clock(10), clock(14)], "playing from the edit on")
    }

    /// A banner alone for long, joined by a scheduled change: its countdown ran out, so the edit's
    /// entry already shows what the engine catches up to at once, and nothing is planned before it.
    @Test func aPlannedRedefinitionJoiningALoneBannerIsCaughtUpAtItsTime() {
        let carousel = scheduled([banner("a")])
        let joined = Lineup(banners: [banner("a"), banner("b")], interval: .seconds(4), timeZone: .utc)
        let redefinitions = [
            PlannedRedefinition(at: clock(30), change: 1) { $0.redefine(joined, autoplay: nil, at: $1) }
        ]
        let plan = carousel.plan(from: clock(1), limit: 4, before: nil, redefinitions: redefinitions)
        var engine = carousel
        engine.redefine(joined, autoplay: nil, at: clock(30))
        engine.advance(to: clock(30))
        #expect(plan.entries.first?.at == clock(30) && plan.entries.first?.change == 1)
        #expect(plan.entries.first?.banner == engine.currentBanner && plan.entries.first?.index == engine.index)
        #expect(zip(plan.entries, plan.entries.dropFirst()).allSatisfy { $0.at < $1.at }, "in order: \(plan.entries)")
        #expect(plan.entries.dropFirst().first?.at == engine.nextChangeAt)
    }

    @Test func aTakeoverWithAnEndPlansTheReturn() throws {
        var carousel = scheduled([banner("a"), banner("b")])
        try carousel.apply(.startTakeover(banner: banner("promo"), duration: .seconds(10)), at: clock(1))
        let plan = carousel.plan(from: clock(1), limit: 3, before: nil).entries
        #expect(plan.map(\.at) == [clock(11), clock(15), clock(19)])
        #expect(plan.map { $0.banner?.id } == ["a", "b", "a"])
    }
}
