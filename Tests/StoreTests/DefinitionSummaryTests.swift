import Carousel
import Definitions
import Testing
import TimeZones

/// A revision's summary (docs/HISTORY.md): each change between two definitions, in words.
@Suite("Definition summaries")
struct DefinitionSummaryTests {
    let before = CarouselDefinition(
        name: "lobby", interval: .seconds(4),
        banners: [
            Banner(id: "a", image: "https://cdn.example.com/a.png"),
            Banner(id: "b", image: "https://cdn.example.com/b.png", caption: "B"),
            Banner(id: "c", image: "https://cdn.example.com/c.png"),
        ])

    @Test func aNewCarouselSaysHowManyBanners() {
        #expect(before.summary(since: nil) == "created with 3 banners")
        #expect(
            CarouselDefinition(name: "x", banners: [before.banners[0]]).summary(since: nil) == "created with 1 banner")
    }

    @Test func eachChangeIsNamedInTheOrderOfTheFields() throws {
        var after = before
        after.interval = .milliseconds(6500)
        after.autoplay = false
        after.timeZone = try ZoneDirectory.system.rules(named: "Europe/Berlin")
        after.fallback = "c"
        after.banners = [
            Banner(id: "c", image: "https://cdn.example.com/c.png"),
            Banner(id: "b", image: "https://cdn.example.com/b2.png", caption: "B2", duration: .seconds(9)),
            Banner(id: "d", image: "https://cdn.example.com/d.png"),
        ]
        #expect(
            after.summary(since: before)
                == "interval 4.0 s → 6.5 s; autoplay off; time zone UTC → Europe/Berlin; fallback none → 'c'; "
                + "banner 'd' added; banner 'a' removed; banner 'b' changed: image, caption, duration; banners reordered"
        )
    }

    @Test func theSameDefinitionIsNoChange() {
        #expect(before.summary(since: before) == "no change")
    }
}
