import TestSupport
import Testing
import Threading

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
}
