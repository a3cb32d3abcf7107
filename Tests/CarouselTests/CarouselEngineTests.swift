import Locking
import TestSupport
import Testing

@testable import Carousel

/// States passed to `onChange`, in order.
final class ChangeRecorder: Sendable {
    private let states = Lock<[Carousel]>([])

    func record(_ carousel: Carousel, _ cause: ChangeCause) { states.withLock { $0.append(carousel) } }

    var versions: [UInt64] { states.withLock { $0.map(\.version) } }
}

@Suite("Carousel engine")
struct CarouselEngineTests {
    @Test func aCommandPublishesItsStateBeforeItReturns() async throws {
        let clock = ManualClock(t0)
        let recorder = ChangeRecorder()
        let engine = CarouselEngine(carousel: fiveBanners(), clock: clock.read, onChange: recorder.record)
        clock.set(at(1))
        let state = try await engine.perform(.next)
        #expect(state.index == 1)
        #expect(state.nextAdvanceAt == at(5))
        #expect(engine.snapshot == state)
        #expect(recorder.versions == [2])
    }

    @Test func aRefusedCommandPublishesNothing() async throws {
        let recorder = ChangeRecorder()
        let engine = CarouselEngine(carousel: fiveBanners(), clock: ManualClock(t0).read, onChange: recorder.record)
        await #expect(throws: CarouselError.indexOutOfRange(index: 7, count: 5)) {
            try await engine.perform(.jump(to: 7))
        }
        #expect(engine.snapshot.version == 1)
        #expect(recorder.versions == [])
    }

    struct NotWritten: Error {}

    /// Write, then publish: a change whose write fails is never seen; the catch-up is.
    @Test func aChangeThatThrowsKeepsOnlyTheCatchUp() async throws {
        let clock = ManualClock(t0)
        let recorder = ChangeRecorder()
        let engine = CarouselEngine(carousel: fiveBanners(), clock: clock.read, onChange: recorder.record)
        clock.set(at(4.5))
        await #expect(throws: NotWritten.self) {
            try await engine.change { carousel, now throws(NotWritten) in
                try? carousel.apply(.jump(to: 4), at: now)
                throw NotWritten()
            }
        }
        #expect(engine.snapshot.index == 1)
        #expect(recorder.versions == [2])
    }

    @Test func aTickAdvancesToWhatTheClockSays() async {
        let clock = ManualClock(t0)
        let engine = CarouselEngine(carousel: fiveBanners(), clock: clock.read)
        clock.set(at(4.01))
        await engine.tick(expected: at(4))
        #expect(engine.snapshot.index == 1)
        #expect(engine.snapshot.nextAdvanceAt == at(8))
    }

    @Test func aStaleTickIsIgnored() async throws {
        let clock = ManualClock(t0)
        let engine = CarouselEngine(carousel: fiveBanners(), clock: clock.read)
        clock.set(at(3))
        _ = try await engine.perform(.next)  // countdown restarted: due at 7, no longer at 4
        clock.set(at(4))
        await engine.tick(expected: at(4))
        #expect(engine.snapshot.index == 1)
        #expect(engine.snapshot.nextAdvanceAt == at(7))
        #expect(engine.snapshot.version == 2)
    }

    @Test func theTimerAdvancesTheCarouselByItself() async throws {
        let start = Timestamp.now()
        let engine = CarouselEngine(carousel: Carousel(banners: banners(3), interval: .milliseconds(20), now: start))
        engine.start()
        defer { engine.stop() }
        #expect(
            // Generous: with the whole suite running, the timer's queue can wait seconds for a thread.
            await eventually(within: 30) { engine.snapshot.version >= 4 },
            "three advances within 30 s of a 20 ms interval")
        let nextAdvance = try #require(engine.snapshot.nextAdvanceAt)
        #expect((nextAdvance - start).nanoseconds % 20_000_000 == 0, "real ticks stay on start + k × interval")
    }

    @Test func theTimerEndsATimedPause() async throws {
        let engine = CarouselEngine(
            carousel: Carousel(banners: banners(3), interval: .seconds(3600), now: Timestamp.now()))
        engine.start()
        defer { engine.stop() }
        let paused = try await engine.perform(.pause(for: .milliseconds(30)))
        #expect(paused.isPaused)
        #expect(await eventually(within: 10) { !engine.snapshot.isPaused })
        #expect(engine.snapshot.nextAdvanceAt == paused.pausedUntil! + .seconds(3600))
    }
}
