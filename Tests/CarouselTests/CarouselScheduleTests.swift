import Carousel
import Testing
import TimeZones

@Suite("Auto-advance schedule")
struct CarouselScheduleTests {
    @Test func startsOnTheFirstBannerWithAFullCountdown() {
        let carousel = fiveBanners()
        #expect(carousel.index == 0)
        #expect(carousel.count == 5)
        #expect(carousel.currentBanner?.id == "b0")
        #expect(carousel.version == 1)
        #expect(!carousel.isPaused)
        #expect(carousel.nextAdvanceAt == at(4))
        #expect(carousel.currentInterval == .seconds(4))
    }

    @Test func advancesExactlyAtTheDueTimeAndNotBefore() {
        var carousel = fiveBanners()
        carousel.advance(to: at(3.999))
        #expect(carousel.index == 0)
        #expect(carousel.version == 1)
        carousel.advance(to: at(4))
        #expect(carousel.index == 1)
        #expect(carousel.version == 2)
        #expect(carousel.nextAdvanceAt == at(8))
    }

    @Test func aLateTickDoesNotDrift() {
        var carousel = fiveBanners()
        carousel.advance(to: at(4.7))  // processed 700 ms late
        #expect(carousel.index == 1)
        #expect(carousel.nextAdvanceAt == at(8), "the next countdown starts at the due time, not when it was noticed")
        carousel.advance(to: at(8.3))
        #expect(carousel.index == 2)
        #expect(carousel.nextAdvanceAt == at(12))
    }

    @Test func wrapsAroundFromTheLastToTheFirst() {
        var carousel = fiveBanners()
        carousel.advance(to: at(16))
        #expect(carousel.index == 4)
        carousel.advance(to: at(20))
        #expect(carousel.index == 0)
        #expect(carousel.nextAdvanceAt == at(24))
    }

    @Test func catchesUpAfterAStallCountingEveryAdvance() {
        var carousel = fiveBanners()
        carousel.advance(to: at(29))  // seven advances were due (4, 8, …, 28)
        #expect(carousel.index == 2)
        #expect(carousel.nextAdvanceAt == at(32))
        #expect(carousel.version == 8)
    }

    /// Two processes that loaded the same anchor agree on the state, version included, however
    /// often each looked at its clock (docs/STORE.md).
    @Test(arguments: [[29.0], [4, 8, 12, 29], [0.5, 3.99, 17, 28, 28.5, 29]])
    func theStateAtATimeDoesNotDependOnHowItWasReached(_ stops: [Double]) {
        var carousel = fiveBanners()
        for stop in stops { carousel.advance(to: at(stop)) }
        var direct = fiveBanners()
        direct.advance(to: at(29))
        #expect(carousel == direct)
    }

    @Test func aLongStallCountsTheSkippedLaps() {
        var carousel = Carousel(banners: banners(5), interval: .milliseconds(1), now: t0)
        carousel.advance(to: t0 + .milliseconds(1_000_003))
        #expect(carousel.version == 1 + 1_000_003)
    }

    @Test func catchesUpAcrossMillionsOfLapsAtOnce() {
        var carousel = Carousel(banners: banners(5), interval: .milliseconds(1), now: t0)
        let advances: Int64 = 123_456_789_012
        carousel.advance(to: t0 + .milliseconds(advances) + .microseconds(500))
        #expect(carousel.index == Int(advances % 5))
        #expect(carousel.nextAdvanceAt == t0 + .milliseconds(advances + 1))
    }

    @Test func aBannerDurationOverridesTheIntervalWhileItIsCurrent() {
        var carousel = Carousel(banners: banners(3, durations: [1: .seconds(10)]), interval: .seconds(4), now: t0)
        carousel.advance(to: at(4))
        #expect(carousel.index == 1)
        #expect(carousel.currentInterval == .seconds(10))
        #expect(carousel.nextAdvanceAt == at(14))
        carousel.advance(to: at(13.9))
        #expect(carousel.index == 1)
        carousel.advance(to: at(14))
        #expect(carousel.index == 2)
        #expect(carousel.currentInterval == .seconds(4))
        #expect(carousel.nextAdvanceAt == at(18))
    }

    @Test func catchUpHonoursEachBannersDuration() {
        // A lap is 4 + 10 + 4 = 18 s. After three laps (54 s) plus 5 s, banner 1 is current
        // (it became current at 58 s and stays until 68 s).
        var carousel = Carousel(banners: banners(3, durations: [1: .seconds(10)]), interval: .seconds(4), now: t0)
        carousel.advance(to: at(59))
        #expect(carousel.index == 1)
        #expect(carousel.nextAdvanceAt == at(68))
    }

    @Test func subSecondIntervalsAreExact() {
        var carousel = Carousel(banners: banners(3), interval: .milliseconds(250), now: t0)
        carousel.advance(to: at(0.75))
        #expect(carousel.index == 0, "three advances: 1, 2, then back to 0")
        #expect(carousel.nextAdvanceAt == at(1))
    }

    @Test func nextChangeAtIsTheNextAdvanceWhilePlaying() {
        let carousel = fiveBanners()
        #expect(carousel.nextChangeAt == at(4))
    }
}
