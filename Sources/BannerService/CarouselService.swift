import BannerAPI
import Carousel
import Logging
import MicroHTTP

/// The running service: the carousel engine and the HTTP server in front of it.
public final class CarouselService: Sendable {
    public let engine: CarouselEngine
    private let parts: ServiceParts
    private let server: HTTPServer

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    private init(parts: ServiceParts, server: HTTPServer) {
        self.engine = parts.engine
        self.parts = parts
        self.server = server
    }

    /// Clients following `GET /banner/events` now.
    public var eventSubscribers: Int { parts.eventSubscribers }

    /// Binds the port, then starts the carousel's clock. Throws when the port cannot be bound.
    public static func start(
        configuration: ServiceConfiguration, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws(HTTPServerError) -> CarouselService {
        let parts = ServiceParts(
            carousel: Carousel(
                banners: configuration.banners, interval: configuration.interval, autoplay: configuration.autoplay,
                now: clock()),
            corsOrigins: configuration.corsOrigins, heartbeat: configuration.heartbeat,
            controlToken: configuration.controlToken, logger: logger, clock: clock)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port,
            threads: configuration.threads ?? ServerConfiguration.onlineCores,
            connectionTimeoutSeconds: configuration.connectionTimeout, connectionLimit: configuration.maxConnections,
            connectionMemoryLimit: configuration.connectionMemory, maxBodySize: configuration.maxBody,
            errorLog: { [logger] level, message in logger.log(level == .warning ? .warning : .notice, message) })
        let server = try HTTPServer(configuration: serverConfiguration, handler: parts.api, streams: parts.streams)
        parts.engine.start()
        logger.info(
            "carousel of \(configuration.banners.count) banners, interval \(configuration.interval.seconds) s, "
                + "autoplay \(configuration.autoplay ? "on" : "off"), "
                + "control token \(configuration.controlToken == nil ? "not set: commands are open" : "required"), "
                + "\(serverConfiguration.threads) worker thread\(serverConfiguration.threads == 1 ? "" : "s")")
        return CarouselService(parts: parts, server: server)
    }

    /// Stops the clock, ends every event stream, stops accepting connections, and finishes or
    /// refuses requests in progress.
    public func stop() {
        engine.stop()
        parts.stopHeartbeat()
        server.stop()
    }
}
