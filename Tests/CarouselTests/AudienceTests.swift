import Carousel
import Testing
import TimeZones

/// Audiences (docs/AUDIENCES.md): each audience its own rotation, turn, countdown and version,
/// moved together by time and commands. Manual clock, exact times.
@Suite("Audiences")
struct AudienceTests {
    /// a for everyone, b for de, c for fr, d for both; 1 s each.
    private let shop = Lineup(
        banners: [
            Banner(id: "a", image: "https://cdn.example.com/a.png"),
            Banner(id: "b", image: "https://cdn.example.com/b.png", audiences: ["de"]),
            Banner(id: "c", image: "https://cdn.example.com/c.png", audiences: ["fr"]),
            Banner(id: "d", image: "https://cdn.example.com/d.png", audiences: ["fr", "de"]),
        ], interval: .seconds(1))

    @Test func eachAudienceRotatesItsOwnBanners() {
        var carousel = Carousel(lineup: shop, now: at(0))
        #expect(shop.audiences == ["de", "fr"])
        #expect(carousel.rotationIDs == ["a"], "screens declaring no audience: the banners meant for all")
        #expect(carousel.state(for: "de").rotationIDs == ["a", "b", "d"])
        #expect(carousel.state(for: "fr").rotationIDs == ["a", "c", "d"])
        #expect(carousel.state(for: "it") == carousel.state(for: nil), "an audience no banner names sees the default")
        var de: [String] = []
        var fr: [String] = []
        for second in 0..<7 {
            carousel.advance(to: at(Double(second)))
            de.append(carousel.state(for: "de").currentBanner!.id)
            fr.append(carousel.state(for: "fr").currentBanner!.id)
            #expect(carousel.currentBanner?.id == "a")
        }
        #expect(de == ["a", "b", "d", "a", "b", "d", "a"])
        #expect(fr == ["a", "c", "d", "a", "c", "d", "a"])
        #expect(carousel.state(for: "de").version == 7, "one version per advance of that audience")
        #expect(carousel.version == 1, "a lone banner does not advance")
        #expect(carousel.nextAdvanceAt == nil)
        #expect(carousel.nextChangeAt == at(7), "the audiences' next advance wakes the owner")
        #expect(carousel.state(for: "de").audienceStates.isEmpty)
    }

    @Test func nextAndPauseMoveEveryAudience() throws {
        var carousel = Carousel(lineup: shop, now: at(0))
        try carousel.apply(.next, at: at(0.5))
        #expect(carousel.state(for: "de").currentBanner?.id == "b")
        #expect(carousel.state(for: "fr").currentBanner?.id == "c")
        #expect(carousel.state(for: "de").nextAdvanceAt == at(1.5), "a move restarts each audience's countdown")
        #expect(carousel.version == 1, "nothing else to show: the default state did not change")
        try carousel.apply(.pause(for: nil), at: at(0.7))
        for audience in ["de", "fr", nil] { #expect(carousel.state(for: audience).isPaused) }
        #expect(carousel.state(for: "de").version == 3)
        #expect(carousel.version == 2)
        carousel.advance(to: at(10))
        #expect(carousel.state(for: "de").currentBanner?.id == "b", "paused everywhere")
        try carousel.apply(.resume, at: at(10))
        #expect(carousel.state(for: "fr").nextAdvanceAt == at(11))
    }

    @Test func aMoveIsRefusedOnlyWhenNoAudienceHasBanners() throws {
        let onlyTargeted = Lineup(
            banners: [
                Banner(id: "x", image: "https://cdn.example.com/x.png", audiences: ["de"]),
                Banner(id: "y", image: "https://cdn.example.com/y.png", audiences: ["de"]),
            ], interval: .seconds(5))
        var carousel = Carousel(lineup: onlyTargeted, now: at(0))
        #expect(carousel.currentBanner == nil)
        try carousel.apply(.next, at: at(1))
        #expect(carousel.state(for: "de").currentBanner?.id == "y")
        var empty = Carousel(lineup: Lineup(banners: [], interval: .seconds(5)), now: at(0))
        #expect(throws: CarouselError.noBanners) { try empty.apply(.next, at: at(1)) }
        #expect(throws: CarouselError.noBanners) { try empty.apply(.jump(to: 0), at: at(1)) }
    }

    @Test func aJumpGoesToTheBannerInEveryAudienceThatHasIt() throws {
        var carousel = Carousel(lineup: shop, now: at(0))
        try carousel.apply(.jump(to: 1, audience: "de"), at: at(0.5))
        #expect(carousel.state(for: "de").currentBanner?.id == "b")
        #expect(carousel.state(for: "fr").currentBanner?.id == "a", "b is not fr's: fr stays")
        #expect(carousel.state(for: "fr").version == 1)
        #expect(carousel.state(for: "fr").nextAdvanceAt == at(1), "its countdown untouched")
        try carousel.apply(.jump(to: 2, audience: "de"), at: at(0.6))
        #expect(carousel.state(for: "de").currentBanner?.id == "d")
        #expect(carousel.state(for: "fr").currentBanner?.id == "d", "d is fr's too")
        #expect(carousel.state(for: "fr").nextAdvanceAt == at(1.6))
        #expect(throws: CarouselError.indexOutOfRange(index: 3, count: 3)) {
            try carousel.apply(.jump(to: 3, audience: "fr"), at: at(0.7))
        }
        #expect(throws: CarouselError.indexOutOfRange(index: 1, count: 1)) {
            try carousel.apply(.jump(to: 1), at: at(0.7))
        }
        let before = carousel
        #expect(throws: CarouselError.indexOutOfRange(index: 1, count: 1)) {
            try carousel.apply(.jump(to: 1, audience: "it"), at: at(0.7))
        }
        #expect(carousel == before, "a refused command changes no audience")
    }

    @Test func aTakeoverHoldsEveryAudience() throws {
        var carousel = Carousel(lineup: shop, now: at(0))
        carousel.advance(to: at(1))
        let sale = Banner(id: "sale", image: "https://cdn.example.com/sale.png")
        try carousel.apply(.startTakeover(banner: sale, duration: .seconds(10)), at: at(1.5))
        for audience in ["de", "fr", nil] {
            #expect(carousel.state(for: audience).currentBanner?.id == "sale")
        }
        #expect(throws: CarouselError.takeoverInProgress(bannerID: "sale")) { try carousel.apply(.next, at: at(2)) }
        carousel.advance(to: at(11.5))
        #expect(carousel.state(for: "de").currentBanner?.id == "b", "each audience's banner comes back")
        #expect(carousel.state(for: "fr").currentBanner?.id == "c")
        #expect(carousel.state(for: "de").nextAdvanceAt == at(12.5))
    }

    @Test func theAnchorKeepsEveryAudience() throws {
        var carousel = Carousel(lineup: shop, now: at(0))
        carousel.advance(to: at(2.5))
        try carousel.apply(.next, at: at(2.5))
        let sale = Banner(id: "sale", image: "https://cdn.example.com/sale.png")
        try carousel.apply(.startTakeover(banner: sale, duration: nil), at: at(3))
        let anchor = carousel.anchor
        #expect(anchor.audiences.keys.sorted() == ["de", "fr"])
        #expect(anchor.audiences["de"]?.takeover == nil, "the takeover is kept once")
        #expect(Carousel(lineup: shop, anchor: anchor) == carousel)
        try carousel.apply(.endTakeover, at: at(4))
        var restored = Carousel(lineup: shop, anchor: carousel.anchor)
        restored.advance(to: at(9.25))
        carousel.advance(to: at(9.25))
        #expect(restored == carousel)
        #expect(restored.state(for: "de").version == carousel.state(for: "de").version)
    }

    /// A row written before the audience was named: it starts from the carousel's state.
    @Test func anAudienceTheAnchorDoesNotKnowJoinsAtTheCarouselsBanner() {
        let anchor = CarouselAnchor(index: 0, playback: .playing(since: at(0)), version: 40, changedAt: at(0))
        let carousel = Carousel(lineup: shop, anchor: anchor)
        #expect(carousel.state(for: "de").currentBanner?.id == "a")
        #expect(carousel.state(for: "de").version == 40)
        #expect(carousel.state(for: "de").nextAdvanceAt == at(1))
    }

    @Test func editsKeepAddAndDropAudiences() {
        var carousel = Carousel(lineup: shop, now: at(0))
        carousel.advance(to: at(5))  // de and fr at version 6, showing d
        var edited = shop
        edited.banners[2].audiences = ["it"]  // c: fr loses it, it appears
        edited.banners[3].audiences = ["de"]  // d: fr has only a left
        carousel.redefine(edited, autoplay: nil, at: at(5.5))
        #expect(carousel.audienceStates.keys.sorted() == ["de", "it"])
        #expect(carousel.state(for: "de").currentBanner?.id == "d", "kept, countdown untouched")
        #expect(carousel.state(for: "de").nextAdvanceAt == at(6))
        #expect(carousel.state(for: "de").version == 7)
        #expect(carousel.version > 6, "fr's screens now see the default state: its version is past fr's")
        #expect(carousel.state(for: "it").version == carousel.version, "a new audience starts at the default's")
        #expect(carousel.state(for: "it").currentBanner?.id == "a")
        #expect(carousel.state(for: "it").rotationIDs == ["a", "c"])
    }

    @Test func weightsAndSchedulesApplyWithinEachAudience() {
        let monday = Timestamp(secondsSinceEpoch: 1_796_428_800)  // 2026-12-07T00:00:00Z, a Monday
        let lineup = Lineup(
            banners: [
                Banner(id: "a", image: "https://cdn.example.com/a.png", weight: 2),
                Banner(id: "b", image: "https://cdn.example.com/b.png", audiences: ["de"]),
                Banner(
                    id: "late", image: "https://cdn.example.com/late.png",
                    schedule: Schedule(startsAt: monday + .seconds(3)), audiences: ["de"]),
            ], interval: .seconds(1))
        var carousel = Carousel(lineup: lineup, now: monday)
        var de: [String] = []
        for second in 0..<6 {
            carousel.advance(to: monday + .seconds(second))
            de.append(carousel.state(for: "de").currentBanner!.id)
        }
        // a b a, then at 3 s late joins: the cycle becomes a b late a, a (shown) at its first turn, and
        // the advance due then moves on from there.
        #expect(de == ["a", "b", "a", "b", "late", "a"])
        #expect(carousel.rotationIDs == ["a"], "the default never sees de's banners")
    }

    @Test func theTimelineOfAnAudience() {
        let carousel = Carousel(lineup: shop, now: at(0))
        let plan = carousel.plan(from: at(0), limit: 4, before: nil, audience: "fr")
        #expect(plan.entries.map { $0.banner?.id } == ["c", "d", "a", "c"])
        #expect(plan.entries.map(\.at) == [at(1), at(2), at(3), at(4)])
        #expect(carousel.plan(from: at(0), limit: 4, before: at(10)).entries.isEmpty, "the default has one banner")
    }
}
