import Carousel
import TestSupport
import Testing
import TimeZones

/// The engine's own Dispatch timer, on the real clock: the rules tier (Tests/CarouselTests) runs
/// on a manual clock and never waits, so what needs real time to pass is checked here.
@Suite("Carousel engine on the real clock")
struct EngineTimerTests {
    let threeBanners = (0..<3).map { Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png") }

    @Test func theTimerAdvancesTheCarouselByItself() async throws {
        try TestTier.needs("the real clock")
        let start = Timestamp.now()
        let engine = CarouselEngine(carousel: Carousel(banners: threeBanners, interval: .milliseconds(20), now: start))
        engine.start()
        defer { engine.stop() }
        #expect(
            await eventually { engine.snapshot.version >= 4 },
            "three advances within 10 s of a 20 ms interval")
        let nextAdvance = try #require(engine.snapshot.nextAdvanceAt)
        #expect((nextAdvance - start).nanoseconds % 20_000_000 == 0, "real ticks stay on start + k × interval")
    }

    @Test func theTimerEndsATimedPause() async throws {
        try TestTier.needs("the real clock")
        let engine = CarouselEngine(
            carousel: Carousel(banners: threeBanners, interval: .seconds(3600), now: Timestamp.now()))
        engine.start()
        defer { engine.stop() }
        let paused = try await engine.perform(.pause(for: .milliseconds(30)))
        #expect(paused.isPaused)
        #expect(await eventually { !engine.snapshot.isPaused })
        #expect(engine.snapshot.nextAdvanceAt == paused.pausedUntil! + .seconds(3600))
    }
}
