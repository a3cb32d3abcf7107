import Carousel
import CarouselRuntime
import Logging
import MicroHTTP
import Store
import TimeZones

/// The service without its HTTP server: the runtime (the carousels being served), the streams
/// their outlets feed, and the API that serves them. BannerService puts an `HTTPServer` in front of
/// `api`; tests call `api` directly.
public struct ServiceParts: Sendable {
    let runtime: Runtime<HTTPOutlets>
    private let heartbeat: Heartbeat
    /// The service's open streams; the HTTP server in front of `api` must be given it.
    public let streams = StreamRegistry()
    /// The handler to serve.
    public let api: BannerAPI

    /// `store`, `loaded`, `statsFlushInterval`, `fleet`, `deliver` and `beforeFirstLoad` are the
    /// runtime's (`Runtime.init` says what each is).
    public init(
        store: any CarouselStore, loaded: [StoredCarousel], corsOrigins: [String], heartbeat: Duration,
        access: AccessPolicy, logger: Logger, clock: @escaping @Sendable () -> Timestamp,
        statsFlushInterval: Duration = .seconds(10), fleet: FleetSettings = FleetSettings(),
        media: MediaSettings = MediaSettings(), webhookAllowPrivate: Bool = false,
        deliver: DeliveryWorker.Send? = nil, beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)? = nil
    ) {
        let cors = CORSPolicy(origins: corsOrigins)
        let mediaIndex = MediaIndex(store: store)
        let outlets = HTTPOutlets(cors: cors, streams: streams, media: mediaIndex)
        let runtime = Runtime(
            store: store, loaded: loaded, outlets: outlets, logger: logger, clock: clock,
            statsFlushInterval: statsFlushInterval, fleet: fleet, mediaIndex: mediaIndex, media: media,
            deliver: deliver, beforeFirstLoad: beforeFirstLoad)
        self.runtime = runtime
        self.heartbeat = Heartbeat(every: heartbeat, streams: streams)
        let screenEvents = ScreenEvents(streams: streams)
        runtime.fleet.observe { entry in screenEvents.publish(ScreenRequests.event(entry)) }
        runtime.fleet.observeTransitions {
            [tell = runtime.tellWebhooks, wanted = runtime.webhookEventsWanted] entries in
            // Made only for the types some webhook asks for: screens flipping in and out of step
            // must not cost an event each (its JSON, its named id) for nobody.
            let types = wanted()
            tell(
                entries.filter { types?.contains(ScreenRequests.webhookEventType(of: $0.state)) ?? true }
                    .map(ScreenRequests.webhookEvent))
        }
        api = BannerAPI(
            directory: runtime.directory, fleet: runtime.fleet, screenEvents: screenEvents, outlets: outlets,
            media: runtime.media, tokens: runtime.tokens, scheduled: runtime.scheduled, web: StaticAssets(cors: cors),
            access: access.granting(runtime.tokens, clock: clock), cors: cors,
            logger: logger, webhookAllowPrivate: webhookAllowPrivate, clock: clock, notReady: { runtime.notReady },
            subscribers: { [streams] in streams.countByHolder }, metrics: runtime.metrics)
    }

    /// The carousels being served.
    var directory: CarouselDirectory<HTTPOutlets> { runtime.directory }

    /// Starts every carousel's clock, follows what other processes sharing the store change, and
    /// makes scheduled changes when they are due.
    public func start() {
        runtime.start()
        // After the engines' timers are started: a wake armed before would fire into nothing.
        let maker = PendingChangeMaker(media: runtime.media, access: api.access, logger: api.logger)
        runtime.scheduled.start(making: { change, live in await maker.make(change, on: live) })
    }

    /// Brings the carousels in service up to the store after another process changed it.
    func follow(_ change: StoreChange) async throws(StoreError) {
        try await runtime.directory.follow(change)
    }

    /// Clients following an event stream now.
    public var eventSubscribers: Int { streams.count }

    /// Stops every carousel's clock and the heartbeat (the server ends the streams), and hands
    /// the last counts to the store.
    public func stop() {
        heartbeat.stop()
        runtime.stop()
    }
}
