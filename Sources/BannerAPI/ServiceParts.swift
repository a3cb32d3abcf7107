import Carousel
import Logging
import MicroHTTP
import Store

/// The service without its HTTP server: the carousels being served, the streams they feed, and
/// the API that serves them. BannerService puts an `HTTPServer` in front of `api`; tests call
/// `api` directly.
public struct ServiceParts: Sendable {
    let directory: CarouselDirectory
    private let heartbeat: Heartbeat
    /// The service's open streams; the HTTP server in front of `api` must be given it.
    public let streams = StreamRegistry()
    /// The handler to serve.
    public let api: BannerAPI

    /// - Parameter loaded: the carousels of `store`, as it loaded them.
    public init(
        store: any CarouselStore, loaded: [StoredCarousel], corsOrigins: [String], heartbeat: Duration,
        access: AccessPolicy, logger: Logger, clock: @escaping @Sendable () -> Timestamp
    ) {
        let cors = CORSPolicy(origins: corsOrigins)
        directory = CarouselDirectory(store: store, loaded: loaded, cors: cors, streams: streams, clock: clock)
        self.heartbeat = Heartbeat(every: heartbeat, streams: streams)
        api = BannerAPI(directory: directory, web: StaticAssets(cors: cors), access: access, cors: cors, logger: logger)
    }

    /// Starts every carousel's clock.
    public func start() { directory.start() }

    /// Clients following an event stream now.
    public var eventSubscribers: Int { streams.count }

    /// Stops every carousel's clock and the heartbeat; the server ends the streams.
    public func stop() {
        heartbeat.stop()
        directory.stop()
    }
}
