import Carousel
import MicroHTTP

/// The running service: the carousel engine and the HTTP server in front of it.
public final class CarouselService: Sendable {
    public let engine: CarouselEngine
    private let server: HTTPServer

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    private init(engine: CarouselEngine, server: HTTPServer) {
        self.engine = engine
        self.server = server
    }

    /// Binds the port, then starts the carousel's clock. Throws when the port cannot be bound.
    public static func start(
        configuration: ServiceConfiguration, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws(HTTPServerError) -> CarouselService {
        let carousel = Carousel(
            banners: configuration.banners, interval: configuration.interval,
            autoplay: configuration.autoplay, now: clock())
        let views = ReadViews(initial: carousel)
        let engine = CarouselEngine(carousel: carousel, clock: clock, onChange: views.publish)
        let api = BannerAPI(
            engine: engine, views: views, controlToken: configuration.controlToken.map(ControlToken.init),
            logger: logger)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port,
            threads: configuration.threads ?? ServerConfiguration.onlineCores,
            errorLog: { [logger] message in logger.warning(message) })
        let server = try HTTPServer(configuration: serverConfiguration, handler: api)
        engine.start()
        logger.info(
            "carousel of \(carousel.count) banners, interval \(configuration.interval.seconds) s, "
                + "autoplay \(configuration.autoplay ? "on" : "off"), "
                + "control token \(configuration.controlToken == nil ? "not set: commands are open" : "required"), "
                + "\(serverConfiguration.threads) worker thread\(serverConfiguration.threads == 1 ? "" : "s")")
        return CarouselService(engine: engine, server: server)
    }

    /// Stops accepting connections, finishes or refuses requests in progress, stops the clock.
    public func stop() {
        server.stop()
        engine.stop()
    }
}
