import Carousel
import Testing
import TimeZones

/// What a carousel showed at an instant, and a screen's receipt judged against it (docs/SCREENS.md,
/// "In step"), on exact times. Five banners, 4 s each, from t0: b0 at 0 s, b1 at 4 s, b2 at 8 s…
@Suite("In step")
struct StepCheckTests {
    let tolerance: Duration = .milliseconds(50)

    /// A receipt for `banner` shown at `milliseconds` after t0.
    func receipt(_ banner: String, _ milliseconds: Int64) -> Receipt {
        Receipt(banner: banner, version: 1, shownAt: t0 + .milliseconds(milliseconds))
    }

    @Test func whatWasShownFollowsFromTheStateInEffectWithoutRecordingEveryAdvance() {
        let history = ShowHistory(initial: fiveBanners(), from: t0)
        #expect(history.shown(at: at(0))?.banner?.id == "b0")
        let shown = history.shown(at: at(9.5))
        #expect(shown?.banner?.id == "b2" && shown?.since == at(8) && shown?.version == 3)
        // An hour on, the rotation has gone round 180 times: b0 again at 3600 s.
        #expect(history.shown(at: at(3601))?.banner?.id == "b0")
        #expect(history.shown(at: at(-1)) == nil)
    }

    @Test func aCommandTakesEffectAtItsInstantAndTheRotationFollowsItFromThere() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var state = fiveBanners()
        try state.apply(.jump(to: 4), at: at(5))  // b4 from 5 s, then b0 at 9 s
        history.record(state, from: at(5))
        #expect(history.shown(at: at(4.9))?.banner?.id == "b1")
        #expect(history.shown(at: at(5))?.banner?.id == "b4")
        #expect(history.shown(at: at(9))?.banner?.id == "b0")
        #expect(
            history.transitions(after: at(0), through: at(13), limit: 10).map {
                [$0.at, $0.banner?.id] as [AnyHashable?]
            }
                == [[at(4), "b1"], [at(5), "b4"], [at(9), "b0"], [at(13), "b1"]])
    }

    @Test func inStepUpToTheToleranceOnEitherSideAndNoFurther() {
        let history = ShowHistory(initial: fiveBanners(), from: t0)
        #expect(history.check(receipt("b1", 4000), tolerance: tolerance) == .inStep(lateness: .zero))
        #expect(history.check(receipt("b1", 4050), tolerance: tolerance) == .inStep(lateness: .milliseconds(50)))
        #expect(history.check(receipt("b1", 4051), tolerance: tolerance) == .late(by: .milliseconds(51)))
        #expect(history.check(receipt("b1", 3950), tolerance: tolerance) == .inStep(lateness: .milliseconds(-50)))
        #expect(history.check(receipt("b1", 3949), tolerance: tolerance) == .early(by: .milliseconds(51)))
        #expect(history.check(receipt("b1", 6000), tolerance: tolerance) == .late(by: .seconds(2)))
    }

    @Test func anotherBannerThanTheOneShownOrNextIsTheWrongBanner() {
        let history = ShowHistory(initial: fiveBanners(), from: t0)
        #expect(history.check(receipt("b3", 5000), tolerance: tolerance) == .wrongBanner(expected: "b1"))
        // Still showing the one before, a whole interval late: wrong too.
        #expect(history.check(receipt("b0", 4500), tolerance: tolerance) == .wrongBanner(expected: "b1"))
        #expect(history.check(receipt("nope", 4500), tolerance: tolerance) == .wrongBanner(expected: "b1"))
    }

    @Test func aReceiptForAnInstantBeforeACommandIsJudgedByWhatWasShownThen() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var state = fiveBanners()
        try state.apply(.jump(to: 3), at: at(6))
        history.record(state, from: at(6))
        // Sent after the command, about 5.99 s: b1 was still right then.
        #expect(history.check(receipt("b1", 5990), tolerance: tolerance) == .late(by: .milliseconds(1990)))
        #expect(history.check(receipt("b1", 4010), tolerance: tolerance) == .inStep(lateness: .milliseconds(10)))
        // The command's banner, 20 ms after the command: in step; 30 ms before it: early by that.
        #expect(history.check(receipt("b3", 6020), tolerance: tolerance) == .inStep(lateness: .milliseconds(20)))
        #expect(history.check(receipt("b3", 5970), tolerance: tolerance) == .inStep(lateness: .milliseconds(-30)))
        #expect(history.check(receipt("b2", 8000), tolerance: tolerance) == .wrongBanner(expected: "b3"))
    }

    @Test func beforeTheHistoryNothingCanBeSaid() {
        let history = ShowHistory(initial: fiveBanners(), from: at(100))
        #expect(history.check(receipt("b0", 50_000), tolerance: tolerance) == .unknown)
    }

    @Test func twoChangesWithoutAReceiptAreFrozenOnceTheGraceForBatchesIsPast() throws {
        let history = ShowHistory(initial: fiveBanners(), from: t0)
        let grace: Duration = .seconds(5)
        // Last receipt for b1 at 4 s; b2 at 8, b3 at 12.
        #expect(!history.isFrozen(lastShownAt: at(4), now: at(16.9), grace: grace))
        #expect(history.isFrozen(lastShownAt: at(4), now: at(17), grace: grace))
        // A paused carousel changes nothing: its screens are never frozen.
        var paused = fiveBanners()
        try paused.apply(.pause(for: nil), at: at(1))
        var still = ShowHistory(initial: fiveBanners(), from: t0)
        still.record(paused, from: at(1))
        #expect(!still.isFrozen(lastShownAt: at(0), now: at(600), grace: grace))
    }

    /// The fleet's one walk per carousel answers as the history does screen by screen, or not at all.
    @Test func oneWalkTellsEveryScreenWhatTheHistoryWould() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var state = fiveBanners()
        try state.apply(.jump(to: 4), at: at(5))  // a command between the advances
        history.record(state, from: at(5))
        let grace: Duration = .seconds(5)
        let now = at(40)
        let check = history.frozenCheck(earliest: at(3), through: now - grace, grace: grace)
        for tenths in stride(from: 30, through: 400, by: 5) {
            let lastShownAt = at(Double(tenths) / 10)
            #expect(
                check.isFrozen(lastShownAt: lastShownAt, now: now)
                    == history.isFrozen(lastShownAt: lastShownAt, now: now, grace: grace), "at \(tenths / 10) s")
        }
        #expect(check.isFrozen(lastShownAt: at(2.9), now: now) == nil, "before the walk began")
        // A walk cut short (1,000 changes, four an hour… here every 4 s for over an hour) still
        // says frozen where it saw two changes, and nothing past the changes it saw.
        let long = ShowHistory(initial: fiveBanners(), from: t0, span: .seconds(7200))
        let cut = long.frozenCheck(earliest: at(0), through: at(5000) - grace, grace: grace)
        #expect(cut.isFrozen(lastShownAt: at(100), now: at(5000)) == true)
        #expect(cut.isFrozen(lastShownAt: at(4500), now: at(5000)) == nil)
        #expect(long.isFrozen(lastShownAt: at(4500), now: at(5000), grace: grace))
    }

    /// A walk on into the future says when each screen will be frozen: the instant the history's
    /// own answer turns, and nothing later than the walk saw (the fleet judges a screen again
    /// then, not every second).
    @Test func aWalkAheadTellsWhenAScreenWillBeFrozen() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var state = fiveBanners()
        try state.apply(.jump(to: 4), at: at(5))
        history.record(state, from: at(5))
        let grace: Duration = .seconds(5)
        let check = history.frozenCheck(earliest: at(3), through: at(60), grace: grace)
        for tenths in stride(from: 30, through: 500, by: 5) {
            let lastShownAt = at(Double(tenths) / 10)
            guard case .at(let onset) = check.frozenFrom(lastShownAt: lastShownAt) else {
                Issue.record("no onset for a receipt at \(tenths / 10) s, with changes every 4 s walked to 60 s")
                continue
            }
            #expect(!history.isFrozen(lastShownAt: lastShownAt, now: onset - .nanoseconds(1), grace: grace))
            #expect(history.isFrozen(lastShownAt: lastShownAt, now: onset, grace: grace))
        }
        // Past the walk's end: not frozen through it plus the grace, and no later instant promised.
        #expect(check.frozenFrom(lastShownAt: at(57)) == .after(at(65)))
        #expect(!history.isFrozen(lastShownAt: at(57), now: at(65), grace: grace))
        // A paused carousel's screens: not through the walk's end, however far it goes.
        var paused = fiveBanners()
        try paused.apply(.pause(for: nil), at: at(1))
        var still = ShowHistory(initial: fiveBanners(), from: t0)
        still.record(paused, from: at(1))
        #expect(
            still.frozenCheck(earliest: at(0), through: at(600), grace: grace).frozenFrom(lastShownAt: at(0))
                == .after(at(605)))
    }

    /// Remembering what was shown for the instants it holds answers what working it out each
    /// time answers: receipts in order, back and forth, from audiences in turn, across a command.
    @Test func aRememberedAnswerIsTheAnswer() throws {
        let shop = Lineup(
            banners: [
                Banner(id: "a", image: "https://cdn.example.com/a.png"),
                Banner(id: "b", image: "https://cdn.example.com/b.png", audiences: ["de"]),
                Banner(id: "c", image: "https://cdn.example.com/c.png", audiences: ["fr"]),
            ], interval: .seconds(1))
        var state = Carousel(lineup: shop, now: t0)
        var history = ShowHistory(initial: state, from: t0)
        let tolerance: Duration = .milliseconds(50)
        func compare(_ tenths: [Int], _ audiences: [String?]) {
            for (step, tenth) in tenths.enumerated() {
                let audience = audiences[step % audiences.count]
                for banner in ["a", "b", "c"] {
                    let receipt = receipt(banner, Int64(tenth) * 100)
                    #expect(
                        history.checkRemembering(receipt, tolerance: tolerance, audience: audience)
                            == history.check(receipt, tolerance: tolerance, audience: audience),
                        "\(banner) at \(tenth) tenths for \(audience ?? "everyone")")
                }
            }
        }
        let forth = Array(0...120)
        for audience in [nil, "de", "fr"] { compare(forth, [audience]) }
        compare(forth.reversed(), ["de"])
        compare(forth, ["de", "fr", nil])
        _ = history.checkRemembering(receipt("a", 6500), tolerance: tolerance)  // remembered from 0 s on
        try state.apply(.pause(for: nil), at: at(6.25))  // the history moves: what was remembered is not
        history.record(state, from: at(6.25))
        for audience in [nil, "de", "fr"] { compare(forth, [audience]) }
        compare(forth.reversed(), ["de"])
    }

    @Test func recordingMovesTheGeneration() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        let before = history.generation
        var state = fiveBanners()
        try state.apply(.next, at: at(2))
        history.record(state, from: at(2))
        #expect(history.generation != before)
    }

    @Test func statesOlderThanTheSpanGoButTheOneInEffectThenStays() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0, span: .seconds(60))
        var state = fiveBanners()
        try state.apply(.next, at: at(10))
        history.record(state, from: at(10))
        try state.apply(.next, at: at(100))
        history.record(state, from: at(100))
        // 60 s before 100 s is 40 s: the state of 10 s was in effect then and is kept.
        #expect(history.knownFrom == at(10))
        try state.apply(.next, at: at(200))
        history.record(state, from: at(200))
        #expect(history.knownFrom == at(100))
        #expect(history.shown(at: at(50)) == nil)
        #expect(history.shown(at: at(150)) != nil)
    }

    /// A flood of commands (here one a millisecond) keeps the latest `maxStates`, not an hour of them.
    @Test func aFloodOfCommandsKeepsTheLatestStatesOnly() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var state = fiveBanners()
        let count = ShowHistory.maxStates + 2_500
        for number in 1...count {
            try state.apply(.next, at: at(Double(number) / 1000))
            history.record(state, from: at(Double(number) / 1000))
        }
        let oldestKept = count - ShowHistory.maxStates + 1
        #expect(history.knownFrom == at(Double(oldestKept) / 1000))
        #expect(history.shown(at: at(Double(oldestKept - 1) / 1000)) == nil)
        #expect(history.shown(at: at(Double(oldestKept) / 1000))?.version == state.version - UInt64(count - oldestKept))
        #expect(history.shown(at: at(Double(count) / 1000 + 0.0005))?.version == state.version)
        // A clock that went back: the states after the new one go, the new one governs.
        var back = state
        try back.apply(.previous, at: at(5))
        history.record(back, from: at(5))
        #expect(history.shown(at: at(6))?.version == back.version)
        #expect(history.shown(at: at(4.9995))?.version == state.version - UInt64(count - 4999))
    }

    @Test func aChangeTakesEffectAtItsOwnInstantOrWhenItWasMadeIfThatIsEarlier() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        // Made on another replica at 5 s, heard here at 5.2 s: from 5 s.
        var followed = fiveBanners()
        try followed.apply(.jump(to: 3), at: at(5))
        history.recordChange(followed, madeAt: at(5.25))
        #expect(history.shown(at: at(5.1))?.banner?.id == "b3")
        // An edit at 7 s that kept b3 (shown since 5 s) and slowed the carousel to 10 s: b3 still
        // since 5 s, the next change at 15 s instead of 9 s.
        var edited = Carousel(banners: banners(5), interval: .seconds(10), now: t0)
        try edited.apply(.jump(to: 3), at: at(5))
        history.recordChange(edited, madeAt: at(7))
        #expect(history.shown(at: at(6))?.since == at(5))
        #expect(history.transitions(after: at(5), through: at(20), limit: 1).first?.at == at(15))
        // A change whose own last change is older than the latest state kept (an edit that kept
        // what was shown): from when it was made, never rewriting the past.
        let older = fiveBanners()  // its last change at 0 s
        history.recordChange(older, madeAt: at(8))
        #expect(history.shown(at: at(7.5))?.banner?.id == "b3")
        #expect(history.shown(at: at(8))?.banner?.id == "b2")
    }

    @Test func aClockThatWentBackReplacesWhatCameAfter() throws {
        var history = ShowHistory(initial: fiveBanners(), from: t0)
        var later = fiveBanners()
        try later.apply(.jump(to: 2), at: at(30))
        history.record(later, from: at(30))
        var earlier = fiveBanners()
        try earlier.apply(.jump(to: 4), at: at(20))
        history.record(earlier, from: at(20))
        // From 20 s, b4, then b0 at 24 s, b1 at 28 s: the jump to b2 at 30 s is gone.
        #expect(history.shown(at: at(21))?.banner?.id == "b4")
        #expect(history.shown(at: at(31))?.banner?.id == "b1")
    }
}

extension FrozenCheck {
    /// What `frozenFrom` says of a screen at `now`, to set beside `ShowHistory.isFrozen`; nil when
    /// the changes walked do not tell.
    func isFrozen(lastShownAt: Timestamp, now: Timestamp) -> Bool? {
        switch frozenFrom(lastShownAt: lastShownAt) {
        case .at(let onset): onset <= now
        case .after(let instant): now <= instant ? false : nil
        case nil: nil
        }
    }
}
