import Carousel
import Testing

@Suite("Anchors and edits")
struct CarouselEditTests {
    @Test func aCarouselRestoredFromItsAnchorIsTheSameCarousel() throws {
        var carousel = fiveBanners()
        try carousel.apply(.jump(to: 3), at: at(2))
        try carousel.apply(.pause(for: .seconds(30)), at: at(3))
        let restored = Carousel(
            lineup: Lineup(banners: carousel.banners, interval: carousel.interval), anchor: carousel.anchor)
        #expect(restored == carousel)
    }

    @Test func aRestoredCarouselCatchesUpWithTheClockAsTheOriginalWould() {
        let stored = fiveBanners().anchor
        var restored = Carousel(lineup: Lineup(banners: banners(5), interval: .seconds(4)), anchor: stored)
        restored.advance(to: at(29))
        var original = fiveBanners()
        original.advance(to: at(29))
        #expect(restored == original)
    }

    @Test func anAnchorPastTheEndOfTheBannersShowsTheFirst() {
        let anchor = CarouselAnchor(index: 7, playback: .playing(since: t0), version: 9, changedAt: t0)
        let carousel = Carousel(lineup: Lineup(banners: banners(3), interval: .seconds(4)), anchor: anchor)
        #expect(carousel.index == 0)
        #expect(Carousel(lineup: Lineup(banners: [], interval: .seconds(4)), anchor: anchor).index == nil)
    }

    @Test func anEditKeepsTheCurrentBannerAndItsCountdown() {
        var carousel = fiveBanners()
        carousel.advance(to: at(5))  // b1 current since 4
        var edited = banners(5)
        edited.remove(at: 0)  // b1 moves to position 0
        edited.append(Banner(id: "new", image: "https://cdn.example.com/new.png"))
        carousel.redefine(Lineup(banners: edited, interval: .seconds(4)), autoplay: nil, at: at(6))
        #expect(carousel.currentBanner?.id == "b1")
        #expect(carousel.index == 0)
        #expect(carousel.nextAdvanceAt == at(8))
        #expect(carousel.version == 3)
    }

    @Test func whenTheCurrentBannerIsRemovedTheNextSurvivorTakesOverWithAFullCountdown() {
        var carousel = fiveBanners()
        carousel.advance(to: at(5))  // b1 current
        let edited = banners(5).filter { $0.id != "b1" && $0.id != "b2" }  // b0, b3, b4
        carousel.redefine(Lineup(banners: edited, interval: .seconds(10)), autoplay: nil, at: at(6))
        #expect(carousel.currentBanner?.id == "b3")
        #expect(carousel.nextAdvanceAt == at(16))
    }

    @Test func removingEveryBannerLeavesNoCurrentBannerAndAddingOneShowsIt() {
        var carousel = fiveBanners()
        carousel.redefine(Lineup(banners: [], interval: .seconds(4)), autoplay: nil, at: at(1))
        #expect(carousel.index == nil)
        #expect(carousel.nextAdvanceAt == nil)
        carousel.redefine(Lineup(banners: banners(2), interval: .seconds(4)), autoplay: nil, at: at(2))
        #expect(carousel.currentBanner?.id == "b0")
        #expect(carousel.nextAdvanceAt == at(6))
    }

    @Test func changingAutoplayPausesOrStartsAFreshCountdown() {
        var carousel = fiveBanners()
        carousel.redefine(Lineup(banners: banners(5), interval: .seconds(4)), autoplay: false, at: at(1))
        #expect(carousel.isPaused && carousel.pausedUntil == nil)
        carousel.redefine(Lineup(banners: banners(5), interval: .seconds(4)), autoplay: true, at: at(3))
        #expect(carousel.nextAdvanceAt == at(7))
        carousel.redefine(Lineup(banners: banners(5), interval: .seconds(4)), autoplay: true, at: at(5))
        #expect(carousel.nextAdvanceAt == at(7), "autoplay unchanged: the countdown runs on")
    }

    @Test func anEditFirstCatchesUpUnderTheOldDefinition() {
        var carousel = fiveBanners()
        carousel.redefine(Lineup(banners: banners(5), interval: .seconds(10)), autoplay: nil, at: at(9))
        #expect(carousel.currentBanner?.id == "b2")
        #expect(carousel.nextAdvanceAt == at(18))
    }
}
