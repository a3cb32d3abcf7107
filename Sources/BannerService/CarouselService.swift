import Carousel
import MicroHTTP

/// The running service: the carousel engine and the HTTP server in front of it.
public final class CarouselService: Sendable {
    public let engine: CarouselEngine
    private let events: EventHub
    private let server: HTTPServer

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    private init(engine: CarouselEngine, events: EventHub, server: HTTPServer) {
        self.engine = engine
        self.events = events
        self.server = server
    }

    /// Clients following `GET /banner/events` now.
    public var eventSubscribers: Int { events.subscriberCount }

    /// Binds the port, then starts the carousel's clock. Throws when the port cannot be bound.
    public static func start(
        configuration: ServiceConfiguration, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws(HTTPServerError) -> CarouselService {
        let parts = ServiceParts(configuration: configuration, logger: logger, clock: clock)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port,
            threads: configuration.threads ?? ServerConfiguration.onlineCores,
            connectionTimeoutSeconds: configuration.connectionTimeout, connectionLimit: configuration.maxConnections,
            connectionMemoryLimit: configuration.connectionMemory, maxBodySize: configuration.maxBody,
            errorLog: { [logger] level, message in logger.log(level == .warning ? .warning : .notice, message) })
        let server = try HTTPServer(configuration: serverConfiguration, handler: parts.api)
        parts.engine.start()
        logger.info(
            "carousel of \(configuration.banners.count) banners, interval \(configuration.interval.seconds) s, "
                + "autoplay \(configuration.autoplay ? "on" : "off"), "
                + "control token \(configuration.controlToken == nil ? "not set: commands are open" : "required"), "
                + "\(serverConfiguration.threads) worker thread\(serverConfiguration.threads == 1 ? "" : "s")")
        return CarouselService(engine: parts.engine, events: parts.events, server: server)
    }

    /// Stops the clock, ends every event stream, stops accepting connections, and finishes or
    /// refuses requests in progress.
    public func stop() {
        engine.stop()
        events.stop()
        server.stop()
    }
}

/// The service without its HTTP server: the engine, the views and streams it feeds, and the API
/// that serves them. Tests call the API directly from here.
struct ServiceParts {
    let engine: CarouselEngine
    let views: ReadViews
    let events: EventHub
    let api: BannerAPI

    init(configuration: ServiceConfiguration, logger: Logger, clock: @escaping @Sendable () -> Timestamp) {
        let carousel = Carousel(
            banners: configuration.banners, interval: configuration.interval,
            autoplay: configuration.autoplay, now: clock())
        let cors = CORSPolicy(origins: configuration.corsOrigins)
        let views = ReadViews(initial: carousel, cors: cors)
        let events = EventHub(
            version: carousel.version, stateJSON: views.stateJSON, heartbeat: configuration.heartbeat)
        engine = CarouselEngine(carousel: carousel, clock: clock) { changed in
            views.publish(changed)
            events.publish(version: changed.version, stateJSON: views.stateJSON)
        }
        self.views = views
        self.events = events
        api = BannerAPI(
            engine: engine, views: views, events: events, web: WebClient(cors: cors),
            controlToken: configuration.controlToken.map(ControlToken.init), cors: cors, logger: logger)
    }
}
