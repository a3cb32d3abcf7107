import Carousel
import Logging
import MicroHTTP

/// The service without its HTTP server: the engine, the views and streams it feeds, and the API
/// that serves them. BannerService puts an `HTTPServer` in front of `api`; tests call `api`
/// directly.
public struct ServiceParts: Sendable {
    public let engine: CarouselEngine
    let views: ReadViews
    let events: EventHub
    /// The service's open streams; the HTTP server in front of `api` must be given it.
    public let streams = StreamRegistry()
    /// The handler to serve.
    public let api: BannerAPI

    public init(
        carousel: Carousel, corsOrigins: [String], heartbeat: Duration, controlToken: String?, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        let cors = CORSPolicy(origins: corsOrigins)
        let views = ReadViews(initial: carousel, cors: cors)
        let events = EventHub(
            version: carousel.version, stateJSON: views.stateJSON, heartbeat: heartbeat, streams: streams)
        engine = CarouselEngine(carousel: carousel, clock: clock) { changed in
            views.publish(changed)
            events.publish(version: changed.version, stateJSON: views.stateJSON)
        }
        self.views = views
        self.events = events
        api = BannerAPI(
            engine: engine, views: views, events: events, web: StaticAssets(cors: cors),
            controlToken: controlToken.map(ControlToken.init), cors: cors, logger: logger)
    }

    /// Clients following an event stream now.
    public var eventSubscribers: Int { events.subscriberCount }

    /// Stops the event streams' heartbeat (the server ends the streams themselves).
    public func stopHeartbeat() { events.stop() }
}
