import Carousel
import Definitions
import Locking
import MicroHTTP
import Store

/// One carousel being served: its engine (the state), the read views and event stream the engine
/// feeds, and its definition as last stored. Every change runs in the engine, one at a time, and
/// is written to the store before anyone sees it (docs/STORE.md: write, then publish).
final class LiveCarousel: Sendable {
    /// A definition and the revision it was stored at.
    struct Revised: Sendable {
        let definition: CarouselDefinition
        let revision: UInt64
    }

    let key: CarouselKey
    let engine: CarouselEngine
    let views: ReadViews
    let events: EventHub
    /// Prefix of this carousel's ETags: the store and the serial, so that neither another
    /// store's carousel nor a re-created one of the same name ever shares a tag with it.
    private let instance: String
    private let store: any CarouselStore
    /// Changed only inside the engine (in `edit`), so that it moves in step with the state.
    private let stored: Lock<Revised>

    init(
        _ carousel: StoredCarousel, store: any CarouselStore, cors: CORSPolicy, streams: StreamRegistry,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        let definition = carousel.definition
        let state = definition.carousel(at: carousel.anchor)
        let instance = "\(store.identity)-\(carousel.serial)"
        let views = ReadViews(initial: state, cors: cors, instance: instance)
        let events = EventHub(
            group: "carousel-\(carousel.serial)", version: state.version, stateJSON: views.stateJSON, streams: streams)
        self.key = carousel.key
        self.instance = instance
        self.store = store
        self.views = views
        self.events = events
        stored = Lock(Revised(definition: definition, revision: carousel.revision))
        engine = CarouselEngine(carousel: state, clock: clock) { changed in
            views.publish(changed)
            events.publish(version: changed.version, stateJSON: views.stateJSON)
        }
    }

    var name: String { key.name }

    /// The definition as last stored.
    var definition: Revised { stored.withLock { $0 } }

    /// The definition's strong ETag, for `If-Match`.
    func definitionTag(revision: UInt64) -> String {
        EntityTag.make(instance: instance, version: revision, resource: "definition")
    }

    /// Applies a command, written to the store before it is published.
    func perform(_ command: CarouselCommand) async throws(Problem) -> Carousel {
        try await engine.change { [store, key] carousel, now throws(Problem) in
            do throws(CarouselError) {
                try carousel.apply(command, at: now)
            } catch {
                throw BannerAPI.problem(for: error)
            }
            do throws(StoreError) {
                try store.saveAnchor(carousel.anchor, of: key)
            } catch {
                throw Problem.store(error)
            }
            return carousel
        }
    }

    /// An admin change: `revise` turns the stored definition into the new one (or throws the
    /// problem with it); the state follows it (the current banner kept when it survives), the
    /// store takes both, then both are published. `ifMatch` is checked against the definition's
    /// ETag first.
    func edit(
        ifMatch: String?, _ revise: @escaping @Sendable (CarouselDefinition) throws(Problem) -> CarouselDefinition
    ) async throws(Problem) -> Revised {
        try await engine.change { [self] carousel, now throws(Problem) in
            let current = stored.withLock { $0 }
            // An invalid change is refused as such whatever If-Match says.
            let new = try revise(current.definition)
            try checkPrecondition(ifMatch, current)
            new.redefine(&carousel, from: current.definition, at: now)
            let revision: UInt64
            do throws(StoreError) {
                revision = try store.update(
                    key, to: new, anchor: carousel.anchor, expectedRevision: current.revision)
            } catch {
                throw Problem.store(error)
            }
            let revised = Revised(definition: new, revision: revision)
            stored.withLock { $0 = revised }
            return revised
        }
    }

    /// Deletes the carousel from the store (after checking `ifMatch`). The caller then takes it
    /// out of service with `stop`.
    func delete(ifMatch: String?) async throws(Problem) {
        try await engine.change { [self] _, _ throws(Problem) in
            let current = stored.withLock { $0 }
            try checkPrecondition(ifMatch, current)
            do throws(StoreError) {
                try store.delete(key, expectedRevision: current.revision)
            } catch {
                throw Problem.store(error)
            }
        }
    }

    func start() { engine.start() }

    /// Stops the timer and ends the event streams.
    func stop() {
        engine.stop()
        events.finishAll()
    }

    private func checkPrecondition(_ ifMatch: String?, _ current: Revised) throws(Problem) {
        guard let ifMatch else { return }
        let tag = definitionTag(revision: current.revision)
        guard !EntityTag.ifMatch(ifMatch, tag) else { return }
        throw Problem(
            status: 412,
            detail: "If-Match \(ifMatch) is not the carousel '\(name)' as it is now (\(tag), revision "
                + "\(current.revision)): someone changed it since you read it; GET it again, reapply your change "
                + "and send the new ETag",
            headers: [HTTPHeader("ETag", tag)])
    }
}

extension Problem {
    /// The answer for a store that did not do what it was asked (docs/STORE.md).
    static func store(_ error: StoreError) -> Problem {
        switch error {
        case .duplicate(let name):
            Problem(
                status: 409, detail: "a carousel named '\(name)' exists already; PUT /carousels/\(name) replaces it")
        case .notFound(let name):
            notFound(carousel: name)
        case .conflict(let name, let revision):
            Problem(
                status: 412,
                detail: "carousel '\(name)' was changed meanwhile (now revision \(revision)); GET it again, "
                    + "reapply your change and retry")
        case .unavailable(let detail), .unusable(let detail):
            Problem(
                status: 503, detail: "nothing was changed: \(detail)",
                headers: [HTTPHeader("Retry-After", "\(retryAfterSeconds)")])
        }
    }

    /// Seconds a client is asked to wait before retrying a write the store refused.
    static let retryAfterSeconds = 5

    static func notFound(carousel name: String) -> Problem {
        Problem(status: 404, detail: "no carousel named '\(name)'; GET /carousels lists them")
    }
}
