import Carousel
import Dispatch
import Logging
import Metrics
import Store
import TimeZones

/// The carousels in service and everything that keeps them going, without HTTP: the directory
/// of live carousels (each an engine feeding its outlet), proof of play, the store each operation
/// of which is timed, and the follower of what other processes sharing the store change.
public struct Runtime<Outlets: CarouselOutlets>: Sendable {
    public let directory: CarouselDirectory<Outlets>
    /// Carousel changes, timer lateness, plays and store operations, for `GET /metrics`.
    public let metrics: ServiceMetrics
    /// The screens of every carousel (docs/SCREENS.md, "The fleet").
    public let fleet: Fleet<Outlets>
    /// Uploaded images (docs/MEDIA.md).
    public let media: MediaLibrary
    /// The named tokens (docs/TOKENS.md).
    public let tokens: NamedTokens
    /// Changes to make later (docs/SCHEDULED.md).
    public let scheduled: ScheduledChanges<Outlets>
    /// Sends webhook deliveries (docs/WEBHOOKS.md); nil when the runtime was given no way to.
    let deliveries: DeliveryWorker?
    /// Queues events that come from no write (the fleet's screens changing state) for the
    /// webhooks, in a transaction of their own; a store that fails is logged, the events lost.
    public let tellWebhooks: @Sendable ([QueuedEvent]) -> Void
    /// The event types some webhook asks for, as the store has them now (nil when it cannot say:
    /// then every event is made, and `tellWebhooks` finds out): events nobody asked for need not
    /// be made (docs/PERFORMANCE.md, "What a receipt costs").
    public let webhookEventsWanted: @Sendable () -> Set<WebhookEvent>?
    private let follower: StoreFollower<Outlets>

    /// - Parameters:
    ///   - loaded: the carousels of `store`, as it loaded them at start.
    ///   - statsFlushInterval: how often play, view and click counts are handed to the store
    ///     (docs/STATS.md): at most this much is lost when the process is killed.
    ///   - beforeFirstLoad: nil when `loaded` is what the store holds; when the store could not be
    ///     reached at start (`loaded` is then empty), what to do once it is, before the carousels
    ///     are loaded from it (seeding an empty store).
    ///   - fleet: how screens are kept and judged.
    ///   - mediaIndex: what the outlets are told of library images (for `srcset`).
    ///   - media: how uploads are limited and decoded.
    ///   - deliver: makes one webhook delivery's attempt (nil: none is sent, they wait in the store).
    public init(
        store: any CarouselStore, loaded: [StoredCarousel], outlets: Outlets, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp, statsFlushInterval: Duration,
        fleet: FleetSettings = FleetSettings(), mediaIndex: MediaIndex? = nil, media: MediaSettings = MediaSettings(),
        deliver: DeliveryWorker.Send? = nil, beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)?
    ) {
        let metrics = ServiceMetrics(storeUp: { store.unreachable == nil })
        let queued = Doorbell()
        let store = TimedStore(store, metrics: metrics, queued: queued)
        let deliveries = deliver.map { DeliveryWorker(store: store, send: $0, logger: logger, clock: clock) }
        queued.answer { [weak deliveries] in deliveries?.ring() }
        self.deliveries = deliveries
        let tellWebhooks: @Sendable ([QueuedEvent]) -> Void = { [weak store] events in
            guard let store, !events.isEmpty else { return }
            do throws(StoreError) {
                try store.queue(events)
            } catch {
                logger.error(
                    "\(events.count) webhook event\(events.count == 1 ? "" : "s") (\(events[0].type.rawValue)…) could not be queued: \(error)"
                )
            }
        }
        self.tellWebhooks = tellWebhooks
        webhookEventsWanted = { [weak store] in
            guard let store else { return [] }
            return try? Set(store.webhooks().flatMap(\.events))
        }
        let plays = PlayRecorder(
            store: store, flushInterval: statsFlushInterval, metrics: metrics, logger: logger, clock: clock)
        // Off the engine's thread: a store write must not hold a carousel's clock.
        directory = CarouselDirectory(
            store: store, loaded: loaded, outlets: outlets, plays: plays, metrics: metrics, clock: clock,
            tell: { events in DispatchQueue.global().async { tellWebhooks(events) } })
        let tokens = NamedTokens(store: store, logger: logger)
        // Read now when the store could be; otherwise once it is reached, with the carousels.
        if beforeFirstLoad == nil { tokens.reload() }
        self.tokens = tokens
        let scheduled = ScheduledChanges(store: store, directory: directory, logger: logger, clock: clock)
        self.scheduled = scheduled
        follower = StoreFollower(
            directory: directory, tokens: tokens, scheduled: scheduled, store: store, logger: logger,
            beforeFirstLoad: beforeFirstLoad)
        self.fleet = Fleet(directory: directory, store: store, settings: fleet, logger: logger, clock: clock)
        self.media = MediaLibrary(
            store: store, index: mediaIndex ?? MediaIndex(store: store), settings: media, clock: clock,
            carousels: { [directory] in directory.all.map { ($0.name, $0.stored.definition.banners) } })
        self.metrics = metrics
    }

    /// Nil when ready for traffic; otherwise why not, for an operator.
    public var notReady: String? { follower.notReady }

    /// Starts every carousel's clock, follows what other processes sharing the store change, and
    /// flushes play counts and screens to the store from now on.
    public func start() {
        directory.start()
        follower.start()
        directory.plays.start()
        fleet.start()
        deliveries?.start()
    }

    /// Stops every carousel's clock (their outlets are closed) and hands the last counts and
    /// screens to the store.
    public func stop() {
        directory.stop()
        directory.plays.stop()
        fleet.stop()
        media.stop()
        deliveries?.stop()
    }
}
