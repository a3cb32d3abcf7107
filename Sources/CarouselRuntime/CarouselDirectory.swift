import Carousel
import Definitions
import Metrics
import Store
import Threading
import TimeZones

/// The carousels being served, by name. Creating and deleting go through the store first; the
/// outlets hear of every carousel added or removed (the HTTP read path keeps per-thread copies
/// and never looks here on its way).
public final class CarouselDirectory<Outlets: CarouselOutlets>: Sendable {
    public typealias Live = LiveCarousel<Outlets.Outlet>

    private let carousels: Lock<[String: Live]>
    private let outlets: Outlets
    private let store: any CarouselStore
    /// Proof of play: counts what the carousels show, and the views and clicks of their banners.
    public let plays: PlayRecorder
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Timestamp
    /// Told of events no write causes (a takeover ending by itself), for the webhooks.
    private let tell: @Sendable ([QueuedEvent]) -> Void

    init(
        store: any CarouselStore, loaded: [StoredCarousel], outlets: Outlets, plays: PlayRecorder,
        metrics: ServiceMetrics, clock: @escaping @Sendable () -> Timestamp,
        tell: @escaping @Sendable ([QueuedEvent]) -> Void = { _ in }
    ) {
        self.tell = tell
        self.store = store
        self.outlets = outlets
        self.plays = plays
        self.metrics = metrics
        self.clock = clock
        var carousels: [String: Live] = [:]
        for stored in loaded {
            carousels[stored.name] = Live(
                stored, store: store, outlets: outlets, plays: plays, metrics: metrics, clock: clock, tell: tell)
        }
        self.carousels = Lock(carousels)
    }

    public func carousel(named name: String) -> Live? {
        carousels.withLock { $0[name] }
    }

    /// Every carousel, by name.
    public var all: [Live] {
        carousels.withLock { Array($0.values) }.sorted { $0.name < $1.name }
    }

    /// Every carousel, by serial, in no order.
    var bySerial: [Int64: Live] {
        carousels.withLock { carousels in
            Dictionary(carousels.values.map { ($0.key.serial, $0) }) { first, _ in first }
        }
    }

    /// Starts every carousel's clock.
    func start() {
        for carousel in all { carousel.start() }
    }

    /// Stops every carousel's clock and closes their outlets (for HTTP: ends their streams).
    func stop() {
        for carousel in all { carousel.stop() }
    }

    /// A new carousel, stored (synced) as `requester`'s, then served, showing its first banner from now.
    public func create(_ definition: CarouselDefinition, by requester: Requester) throws(StoreError) -> Live {
        let now = clock()
        return serve(
            try store.create(
                definition, anchor: definition.newCarousel(at: now).anchor, by: Attribution(by: requester, at: now)))
    }

    /// Webhooks (docs/WEBHOOKS.md), as the store keeps them.
    public func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        try store.saveWebhook(webhook, by: attribution, keepingAtMost: limit)
    }

    public func webhooks() throws(StoreError) -> [WebhookRecord] {
        try store.webhooks()
    }

    /// Webhook `webhook`'s deliveries, newest first, `limit` at most.
    public func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        try store.deliveries(of: webhook, limit: limit)
    }

    public func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.deleteWebhook(id, by: attribution)
    }

    /// The audit log's entries `query` asks for, newest first.
    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        try store.auditLog(query)
    }

    /// `carousel`'s history as kept, newest first.
    public func revisions(of carousel: Live) throws(StoreError) -> [RevisionRecord] {
        try store.revisions(of: carousel.key.serial)
    }

    /// Revision `revision` of `carousel`; nil when it is not kept.
    public func revision(_ revision: UInt64, of carousel: Live) throws(StoreError) -> Revision? {
        try store.revision(revision, of: carousel.key.serial)
    }

    /// Deletes `carousel` from the store (after checking `condition`), then from service; the
    /// audit log keeps it as `requester`'s.
    public func delete(_ carousel: Live, if condition: RevisionCondition?, by requester: Requester)
        async throws(ChangeError<Never>)
    {
        try await carousel.delete(if: condition, by: requester)
        withdraw(carousel)
    }

    /// Brings the carousels in service up to the store after another process sharing it changed
    /// `change` (docs/STORE.md, several processes): new ones served, deleted ones withdrawn,
    /// changed ones reloaded in their engine.
    public func follow(_ change: StoreChange) async throws(StoreError) {
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
        case .unreachable, .tokens, .pending:
            break  // nothing to reload until it is back; tokens and pending changes are not carousels
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
    private func serve(_ stored: StoredCarousel) -> Live {
        let live = Live(
            stored, store: store, outlets: outlets, plays: plays, metrics: metrics, clock: clock, tell: tell)
        let (served, replaced) = carousels.withLock { carousels in
            let existing = carousels[stored.name]
            if let existing, existing.key == stored.key { return (existing, nil as Live?) }
            carousels[stored.name] = live
            return (live, existing)
        }
        guard served === live else { return served }  // the same carousel, served already
        outlets.membershipChanged()
        replaced?.stop()
        live.start()
        return live
    }

    /// `live` out of service: its timer stopped, its streams ended.
    private func withdraw(_ live: Live) {
        carousels.withLock { carousels in
            if carousels[live.name] === live { carousels[live.name] = nil }
        }
        outlets.membershipChanged()
        live.stop()
    }
}
