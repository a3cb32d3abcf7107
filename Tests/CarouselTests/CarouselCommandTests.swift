import Carousel
import Testing

@Suite("Manual moves")
struct CarouselCommandTests {
    @Test func nextAndPreviousWrapAroundBothWays() throws {
        var carousel = fiveBanners()
        try carousel.apply(.previous, at: at(1))
        #expect(carousel.index == 4)
        try carousel.apply(.next, at: at(2))
        #expect(carousel.index == 0)
        try carousel.apply(.next, at: at(3))
        #expect(carousel.index == 1)
    }

    @Test(arguments: [CarouselCommand.next, .previous, .jump(to: 3)])
    func aManualMoveRestartsTheCountdown(_ command: CarouselCommand) throws {
        var carousel = fiveBanners()
        try carousel.apply(command, at: at(3.5))
        #expect(carousel.nextAdvanceAt == at(7.5))
        carousel.advance(to: at(4))
        #expect(carousel.nextAdvanceAt == at(7.5), "the old due time (4 s) no longer counts")
    }

    @Test func theRestartedCountdownUsesTheNewBannersDuration() throws {
        var carousel = Carousel(banners: banners(3, durations: [1: .seconds(10)]), interval: .seconds(4), now: t0)
        try carousel.apply(.next, at: at(1))
        #expect(carousel.currentInterval == .seconds(10))
        #expect(carousel.nextAdvanceAt == at(11))
    }

    @Test func jumpingToTheCurrentIndexRestartsTheCountdownAndIsAChange() throws {
        var carousel = fiveBanners()
        try carousel.apply(.jump(to: 0), at: at(2))
        #expect(carousel.index == 0)
        #expect(carousel.nextAdvanceAt == at(6))
        #expect(carousel.version == 2)
    }

    @Test(arguments: [-1, 5, 99, Int.max, Int.min])
    func jumpingOutOfRangeIsRefusedAndChangesNothing(_ target: Int) {
        var carousel = fiveBanners()
        let before = carousel
        #expect(throws: CarouselError.indexOutOfRange(index: target, count: 5)) {
            try carousel.apply(.jump(to: target), at: at(1))
        }
        #expect(carousel == before)
    }

    @Test func aCommandFirstCatchesUpWithTheSchedule() throws {
        var carousel = fiveBanners()
        try carousel.apply(.next, at: at(9))  // advances due at 4 and 8 happen first
        #expect(carousel.index == 3)
        #expect(carousel.nextAdvanceAt == at(13))
        #expect(carousel.version == 4, "one for each of the two advances, one for the move")
    }

    @Test func everyObservableChangeIncrementsTheVersionByOne() throws {
        var carousel = fiveBanners()
        try carousel.apply(.next, at: at(1))
        try carousel.apply(.previous, at: at(1))
        try carousel.apply(.pause(for: nil), at: at(1))
        try carousel.apply(.resume, at: at(1))
        #expect(carousel.version == 5)
    }
}

@Suite("Pause and resume")
struct CarouselPauseTests {
    @Test func pausedMeansNoAutomaticAdvance() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: nil), at: at(1))
        #expect(carousel.isPaused)
        #expect(carousel.pausedUntil == nil)
        #expect(carousel.nextAdvanceAt == nil)
        #expect(carousel.nextChangeAt == nil)
        carousel.advance(to: at(1000))
        #expect(carousel.index == 0)
    }

    @Test func manualMovesWorkWhilePausedAndKeepItPaused() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: nil), at: at(1))
        try carousel.apply(.next, at: at(2))
        try carousel.apply(.jump(to: 4), at: at(3))
        #expect(carousel.index == 4)
        #expect(carousel.isPaused)
        #expect(carousel.nextAdvanceAt == nil)
    }

    @Test func resumeRestartsTheCountdownWithAFullInterval() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: nil), at: at(3))
        try carousel.apply(.resume, at: at(10))
        #expect(!carousel.isPaused)
        #expect(carousel.index == 0)
        #expect(carousel.nextAdvanceAt == at(14))
    }

    @Test func resumeWhenNotPausedChangesNothing() throws {
        var carousel = fiveBanners()
        let before = carousel
        try carousel.apply(.resume, at: at(1))
        #expect(carousel == before)
    }

    @Test func pauseWhenPausedIndefinitelyChangesNothing() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: nil), at: at(1))
        let before = carousel
        try carousel.apply(.pause(for: nil), at: at(2))
        #expect(carousel == before)
    }

    @Test func aTimedPauseEndsByItselfAndTheCountdownStartsWhenItEnded() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: .seconds(5)), at: at(2))
        #expect(carousel.pausedUntil == at(7))
        #expect(carousel.nextChangeAt == at(7))
        carousel.advance(to: at(6.999))
        #expect(carousel.isPaused)
        carousel.advance(to: at(7.2))  // noticed 200 ms late
        #expect(!carousel.isPaused)
        #expect(carousel.pausedUntil == nil)
        #expect(carousel.index == 0)
        #expect(carousel.nextAdvanceAt == at(11))
    }

    @Test func aStallPastATimedPauseCatchesUpFromThePausesEnd() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: .seconds(5)), at: at(2))
        carousel.advance(to: at(16))  // pause ended at 7; advances due at 11 and 15
        #expect(carousel.index == 2)
        #expect(carousel.nextAdvanceAt == at(19))
    }

    @Test func aTimedPauseExtendsButNeverShortensAnother() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: .seconds(10)), at: at(0))
        try carousel.apply(.pause(for: .seconds(2)), at: at(1))
        #expect(carousel.pausedUntil == at(10))
        try carousel.apply(.pause(for: .seconds(20)), at: at(1))
        #expect(carousel.pausedUntil == at(21))
    }

    @Test func anOpenEndedPauseOutlastsATimedOne() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: nil), at: at(0))
        try carousel.apply(.pause(for: .seconds(2)), at: at(1))
        #expect(carousel.isPaused)
        #expect(carousel.pausedUntil == nil)
        try carousel.apply(.pause(for: .seconds(2)), at: at(1))
        carousel.advance(to: at(100))
        #expect(carousel.isPaused)
    }

    @Test func anOpenEndedPauseReplacesATimedOne() throws {
        var carousel = fiveBanners()
        try carousel.apply(.pause(for: .seconds(2)), at: at(0))
        try carousel.apply(.pause(for: nil), at: at(1))
        #expect(carousel.pausedUntil == nil)
        carousel.advance(to: at(100))
        #expect(carousel.isPaused)
    }

    @Test(arguments: [Duration.zero, .seconds(-1), .seconds(31_536_001)])
    func aPauseOutsideTheAllowedDurationsIsRefused(_ duration: Duration) {
        var carousel = fiveBanners()
        let before = carousel
        #expect(throws: CarouselError.pauseDurationOutOfRange(duration)) {
            try carousel.apply(.pause(for: duration), at: at(0))
        }
        #expect(carousel == before)
    }

    @Test func withoutAutoplayTheCarouselStartsPaused() {
        let carousel = fiveBanners(autoplay: false)
        #expect(carousel.isPaused)
        #expect(carousel.nextAdvanceAt == nil)
    }
}

@Suite("Small carousels and neighbours")
struct CarouselEdgeTests {
    @Test func oneBannerNeverAdvancesAndMovesStayOnIt() throws {
        var carousel = Carousel(banners: banners(1), interval: .seconds(4), now: t0)
        #expect(carousel.nextAdvanceAt == nil)
        #expect(carousel.previousBanner == nil)
        #expect(carousel.nextBanner == nil)
        carousel.advance(to: at(100))
        try carousel.apply(.next, at: at(101))
        try carousel.apply(.previous, at: at(102))
        #expect(carousel.index == 0)
        #expect(carousel.version == 1, "nothing observable changed")
    }

    @Test func noBannersHasNoIndexAndRefusesMoves() throws {
        var carousel = Carousel(banners: [], interval: .seconds(4), now: t0)
        #expect(carousel.index == nil)
        #expect(carousel.count == 0)
        #expect(carousel.currentBanner == nil)
        #expect(carousel.previousBanner == nil)
        #expect(carousel.nextBanner == nil)
        #expect(carousel.nextAdvanceAt == nil)
        for command in [CarouselCommand.next, .previous, .jump(to: 0)] {
            #expect(throws: CarouselError.noBanners) { try carousel.apply(command, at: at(1)) }
        }
        #expect(carousel.version == 1)
        try carousel.apply(.pause(for: nil), at: at(2))
        #expect(carousel.isPaused)
    }

    @Test func neighboursAreTheBannersEitherSideWithWrapAround() throws {
        var carousel = fiveBanners()
        #expect(carousel.previousBanner?.id == "b4")
        #expect(carousel.nextBanner?.id == "b1")
        try carousel.apply(.jump(to: 4), at: at(1))
        #expect(carousel.previousBanner?.id == "b3")
        #expect(carousel.nextBanner?.id == "b0")
    }

    @Test func withTwoBannersBothNeighboursAreTheOtherOne() {
        let carousel = Carousel(banners: banners(2), interval: .seconds(4), now: t0)
        #expect(carousel.previousBanner?.id == "b1")
        #expect(carousel.nextBanner?.id == "b1")
    }
}
