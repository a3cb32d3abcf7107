import Carousel
import Definitions
import Locking
import MicroHTTP
import Store
import TimeZones

/// The carousels being served, by name. Reads find theirs in their thread's copies (`ReadCache`)
/// and never touch the store; creating and deleting go through the store first.
final class CarouselDirectory: Sendable {
    /// The carousels by name. Reads find theirs in their thread's copies (`ReadCache`, which keeps
    /// `default` apart), so this map is the way of the other requests and of a copy's first read.
    private let carousels: Lock<[String: LiveCarousel]>
    /// The read path's per-thread copies; told of every carousel added or removed.
    private let reads = ReadCache()
    private let store: any CarouselStore
    private let cors: CORSPolicy
    private let streams: StreamRegistry
    /// Proof of play: counts what the carousels show, and the views and clicks of their banners.
    let plays: PlayRecorder
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Timestamp

    init(
        store: any CarouselStore, loaded: [StoredCarousel], cors: CORSPolicy, streams: StreamRegistry,
        plays: PlayRecorder, metrics: ServiceMetrics, clock: @escaping @Sendable () -> Timestamp
    ) {
        self.store = store
        self.cors = cors
        self.streams = streams
        self.plays = plays
        self.metrics = metrics
        self.clock = clock
        var carousels: [String: LiveCarousel] = [:]
        for stored in loaded {
            carousels[stored.name] = LiveCarousel(
                stored, store: store, cors: cors, streams: streams, plays: plays, metrics: metrics, clock: clock)
        }
        self.carousels = Lock(carousels)
    }

    func carousel(named name: String) -> LiveCarousel? {
        carousels.withLock { $0[name] }
    }

    /// The response to a read of `resource` of the carousel `name` (nil: no such carousel), from
    /// the calling thread's copies (`ReadCache`).
    func readResponse(
        carousel name: String, _ resource: ReadViews.Resource, origin: String?, ifNoneMatch: String?
    ) -> PreparedResponse? {
        reads.response(carousel: name, resource, origin: origin, ifNoneMatch: ifNoneMatch) { name in
            carousel(named: name)?.views
        }
    }

    /// Every carousel, by name.
    var all: [LiveCarousel] {
        carousels.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }

    /// Starts every carousel's clock.
    func start() {
        for carousel in all { carousel.start() }
    }

    /// Stops every carousel's clock and ends their streams.
    func stop() {
        for carousel in all { carousel.stop() }
    }

    /// A new carousel, stored (synced), then served, showing its first banner from now.
    func create(_ definition: CarouselDefinition) throws(Problem) -> LiveCarousel {
        let stored: StoredCarousel
        do {
            stored = try store.create(definition, anchor: definition.newCarousel(at: clock()).anchor)
        } catch {
            throw Problem.store(error)
        }
        return serve(stored)
    }

    /// Deletes `carousel` from the store (after checking `ifMatch`), then from service.
    func delete(_ carousel: LiveCarousel, ifMatch: String?) async throws(Problem) {
        try await carousel.delete(ifMatch: ifMatch)
        withdraw(carousel)
    }

    /// Brings the carousels in service up to the store after another process sharing it changed
    /// `change` (docs/STORE.md, several processes): new ones served, deleted ones withdrawn,
    /// changed ones reloaded in their engine.
    func follow(_ change: StoreChange) async throws(StoreError) {
        switch change {
        case .carousel(let name, let note):
            // A command elsewhere, on a carousel served here at the same revision: the note is
            // all it takes, no read of the store.
            if let note, let live = carousel(named: name), live.key.serial == note.serial,
                await live.follow(note)
            {
                return
            }
            try await follow(name, stored: store.load(named: name))
        case .everything:
            let stored = try store.loadAll()
            let names = Set(stored.map(\.name)).union(carousels.withLock { $0.keys })
            for name in names.sorted() {
                try await follow(name, stored: stored.first { $0.name == name })
            }
        case .unreachable:
            break  // nothing to reload until it is back
        }
    }

    private func follow(_ name: String, stored: StoredCarousel?) async throws(StoreError) {
        let live = carousel(named: name)
        switch (live, stored) {
        case (nil, nil):
            break
        case (let live?, nil):
            withdraw(live)
        case (nil, let stored?):
            _ = serve(stored)
        case (let live?, let stored?) where live.key.serial != stored.serial:
            withdraw(live)
            _ = serve(stored)
        case (let live?, _?):
            if try await !live.refresh() { withdraw(live) }
        }
    }

    /// `stored` in service, started, unless the same carousel (same serial) is served already;
    /// one of its name that was deleted meanwhile is withdrawn.
    private func serve(_ stored: StoredCarousel) -> LiveCarousel {
        let live = LiveCarousel(
            stored, store: store, cors: cors, streams: streams, plays: plays, metrics: metrics, clock: clock)
        let (served, replaced) = carousels.withLock { carousels in
            let existing = carousels[stored.name]
            if let existing, existing.key == stored.key { return (existing, nil as LiveCarousel?) }
            carousels[stored.name] = live
            return (live, existing)
        }
        guard served === live else { return served }  // the same carousel, served already
        reads.membershipChanged()
        replaced?.stop()
        live.start()
        return live
    }

    /// `live` out of service: its timer stopped, its streams ended.
    private func withdraw(_ live: LiveCarousel) {
        carousels.withLock { carousels in
            if carousels[live.name] === live { carousels[live.name] = nil }
        }
        reads.membershipChanged()
        live.stop()
    }
}
