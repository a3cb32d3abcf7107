import Carousel
import CarouselRuntime
import Definitions
import Logging
import Store
import TestSupport
import Testing
import Threading
import TimeZones

/// An outlet that keeps what it is told, as the HTTP adapter's views would be told it.
final class RecordingOutlet: CarouselOutlet {
    private let heard = Lock<(published: [Carousel], closed: Bool)>(([], false))
    var published: [Carousel] { heard.withLock { $0.published } }
    var closed: Bool { heard.withLock { $0.closed } }
    func publish(_ state: Carousel) { heard.withLock { $0.published.append(state) } }
    func close() { heard.withLock { $0.closed = true } }
}

final class RecordingOutlets: CarouselOutlets {
    private let made = Lock<(outlets: [String: RecordingOutlet], membershipChanges: Int)>(([:], 0))
    func outlet(for carousel: StoredCarousel, instance: String, state: Carousel) -> RecordingOutlet {
        let outlet = RecordingOutlet()
        made.withLock { $0.outlets[carousel.name] = outlet }
        return outlet
    }
    func membershipChanged() { made.withLock { $0.membershipChanges += 1 } }
    var membershipChanges: Int { made.withLock { $0.membershipChanges } }
}

struct Refused: Error, Equatable {}

/// The runtime on its own, with no HTTP in front of it: what a change does to the store and to
/// the carousel's outlet, and how each refusal is told (docs/ARCHITECTURE.md, "The runtime"). A
/// manual clock, timers never started.
@Suite("Live carousels")
struct LiveCarouselTests {
    let clock = ManualClock(t0)
    let store = MemoryStore()
    let outlets = RecordingOutlets()
    let runtime: Runtime<RecordingOutlets>

    init() throws {
        let definition = CarouselDefinition(name: "lobby", banners: sampleBanners(3))
        let stored = try store.create(definition, anchor: definition.newCarousel(at: t0).anchor, by: byTests)
        runtime = Runtime(
            store: store, loaded: [stored], outlets: outlets, logger: Logger(label: "test", minimumLevel: .critical),
            clock: clock.read, statsFlushInterval: .seconds(10), beforeFirstLoad: nil)
    }

    var lobby: LiveCarousel<RecordingOutlet> { runtime.directory.carousel(named: "lobby")! }

    @Test func aCommandIsStoredAndPublishedBeforeItIsAnswered() async throws {
        clock.set(t0 + .seconds(1))
        let state = try await lobby.perform(.next, by: tester)
        #expect(state.currentBanner?.id == "b1")
        #expect(lobby.outlet.published.last == state)
        let stored = try #require(try store.load(named: "lobby"))
        #expect(stored.definition.carousel(at: stored.anchor).version == state.version)
    }

    @Test func receiptsAreJudgedAgainstWhatWasShownIncludingCommands() async throws {
        clock.set(t0 + .seconds(1))
        _ = try await lobby.perform(.next, by: tester)  // b1 from 1 s; the interval is 4 s, so b2 at 5 s
        let tolerance: Duration = .milliseconds(50)
        func receipt(_ banner: String, _ milliseconds: Int64) -> Receipt {
            Receipt(banner: banner, version: 2, shownAt: t0 + .milliseconds(milliseconds))
        }
        #expect(lobby.check(receipt("b0", 500), tolerance: tolerance) == .late(by: .milliseconds(500)))
        #expect(lobby.check(receipt("b1", 1_020), tolerance: tolerance) == .inStep(lateness: .milliseconds(20)))
        #expect(lobby.check(receipt("b0", 1_200), tolerance: tolerance) == .wrongBanner(expected: "b1"))
        #expect(lobby.check(receipt("b2", 5_000), tolerance: tolerance) == .inStep(lateness: .zero))
        #expect(!lobby.isFrozen(lastShownAt: t0 + .seconds(5), now: t0 + .seconds(9), grace: .zero, audience: nil))
        #expect(lobby.isFrozen(lastShownAt: t0 + .seconds(5), now: t0 + .seconds(13), grace: .zero, audience: nil))
    }

    @Test func aCommandTheRulesRefuseChangesNothingAndSaysWhy() async throws {
        let before = try store.load(named: "lobby")
        do {
            _ = try await lobby.perform(.jump(to: 7), by: tester)
            Issue.record("a jump to banner 7 of 3 went through")
        } catch {
            guard case .refused(.indexOutOfRange(index: 7, count: 3)) = error else { throw error }
        }
        #expect(lobby.outlet.published.isEmpty)
        #expect(try store.load(named: "lobby") == before)
    }

    @Test func anEditWhoseConditionFailsIsToldWhatIsStoredAndWritesNothing() async throws {
        let atRevision1: RevisionCondition = { $0 == 1 }
        let edited = try await lobby.edit(if: atRevision1, by: tester, as: .patchCarousel) {
            (definition: CarouselDefinition) throws(Refused) in
            var changed = definition
            changed.interval = .seconds(9)
            return changed
        }
        #expect(edited.revision == 2)
        do {
            _ = try await lobby.edit(if: atRevision1, by: tester, as: .patchCarousel) {
                (definition: CarouselDefinition) throws(Refused) in
                definition
            }
            Issue.record("an edit on revision 1 went through at revision 2")
        } catch {
            guard case .conditionFailed(let current) = error else { throw error }
            #expect(current.revision == 2)
        }
        #expect(try store.load(named: "lobby")?.revision == 2)
    }

    @Test func aRefusedEditIsRefusedAsSuchWhateverItsCondition() async throws {
        do {
            let never: RevisionCondition = { _ in false }
            _ = try await lobby.edit(if: never, by: tester, as: .patchCarousel) {
                (_: CarouselDefinition) throws(Refused) in
                throw Refused()
            }
            Issue.record("a refused edit went through")
        } catch {
            guard case .refused(Refused()) = error else { throw error }
        }
        #expect(try store.load(named: "lobby")?.revision == 1)
    }

    @Test func creatingAndDeletingTellTheOutletsAndDeletingClosesTheOutlet() async throws {
        let created = try runtime.directory.create(
            CarouselDefinition(name: "hall", banners: sampleBanners(2)), by: tester)
        #expect(outlets.membershipChanges == 1)
        #expect(runtime.directory.all.map(\.name) == ["hall", "lobby"])
        do {
            try await runtime.directory.delete(created, if: { $0 == 5 }, by: tester)
            Issue.record("a delete on revision 5 went through at revision 1")
        } catch {
            guard case .conditionFailed = error else { throw error }
        }
        #expect(!created.outlet.closed)
        try await runtime.directory.delete(created, if: nil, by: tester)
        #expect(created.outlet.closed)
        #expect(outlets.membershipChanges == 2)
        #expect(try store.load(named: "hall") == nil)
        #expect(runtime.directory.carousel(named: "hall") == nil)
    }
}
