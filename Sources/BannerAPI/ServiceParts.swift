import Carousel
import Logging
import MicroHTTP
import Store
import TimeZones

/// The service without its HTTP server: the carousels being served, the streams they feed, and
/// the API that serves them. BannerService puts an `HTTPServer` in front of `api`; tests call
/// `api` directly.
public struct ServiceParts: Sendable {
    let directory: CarouselDirectory
    private let follower: StoreFollower
    private let heartbeat: Heartbeat
    private let plays: PlayRecorder
    /// The service's open streams; the HTTP server in front of `api` must be given it.
    public let streams = StreamRegistry()
    /// The handler to serve.
    public let api: BannerAPI

    /// - Parameters:
    ///   - loaded: the carousels of `store`, as it loaded them at start.
    ///   - statsFlushInterval: how often play, view and click counts are handed to the store
    ///     (docs/STATS.md): at most this much is lost when the process is killed.
    ///   - beforeFirstLoad: nil when `loaded` is what the store holds; when the store could not be
    ///     reached at start (`loaded` is then empty), what to do once it is, before the carousels
    ///     are loaded from it (seeding an empty store).
    public init(
        store: any CarouselStore, loaded: [StoredCarousel], corsOrigins: [String], heartbeat: Duration,
        access: AccessPolicy, logger: Logger, clock: @escaping @Sendable () -> Timestamp,
        statsFlushInterval: Duration = .seconds(10), beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)? = nil
    ) {
        let cors = CORSPolicy(origins: corsOrigins)
        let metrics = ServiceMetrics(storeUp: { store.unreachable == nil })
        let store = TimedStore(store, metrics: metrics)
        let plays = PlayRecorder(
            store: store, flushInterval: statsFlushInterval, metrics: metrics, logger: logger, clock: clock)
        let directory = CarouselDirectory(
            store: store, loaded: loaded, cors: cors, streams: streams, plays: plays, metrics: metrics, clock: clock)
        let follower = StoreFollower(
            directory: directory, store: store, logger: logger, beforeFirstLoad: beforeFirstLoad)
        self.directory = directory
        self.plays = plays
        self.follower = follower
        self.heartbeat = Heartbeat(every: heartbeat, streams: streams)
        api = BannerAPI(
            directory: directory, web: StaticAssets(cors: cors), access: access, cors: cors, logger: logger,
            clock: clock, notReady: { follower.notReady }, subscribers: { [streams] in streams.countByHolder },
            metrics: metrics)
    }

    /// Starts every carousel's clock, and follows what other processes sharing the store change.
    public func start() {
        directory.start()
        follower.start()
        plays.start()
    }

    /// Brings the carousels in service up to the store after another process changed it.
    func follow(_ change: StoreChange) async throws(StoreError) {
        try await directory.follow(change)
    }

    /// Clients following an event stream now.
    public var eventSubscribers: Int { streams.count }

    /// Stops every carousel's clock and the heartbeat (the server ends the streams), and hands
    /// the last counts to the store.
    public func stop() {
        heartbeat.stop()
        directory.stop()
        plays.stop()
    }
}
