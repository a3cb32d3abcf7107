import Carousel
import CarouselRuntime
import Definitions
import Logging
import MicroHTTP

/// Everything the service is started with, after merging flags, environment, file and defaults.
public struct ServiceConfiguration: Sendable, Equatable {
    public var host = "0.0.0.0"
    public var port = 8080
    public var interval: Duration = .seconds(4)
    public var autoplay = true
    public var banners: [Banner] = []
    /// A v2 file's `carousels`; nil for a v1 file, whose top-level `interval`, `autoplay` and
    /// `banners` are the carousel `default`.
    public var carousels: [CarouselDefinition]?
    /// Images the configuration file gives as files beside it: its banners show them from the
    /// media library, which an empty store is given first (`LibraryFiles`, docs/CONFIGURATION.md).
    public var libraryFiles: [LibraryFile] = []
    /// Where carousels are kept; the configuration only seeds an empty store.
    public var store: StoreLocation = .sqlite(path: StoreLocation.defaultPath)
    /// The file the configuration was read from, when there was one.
    public var configurationFile: String?
    /// When set, every command needs `Authorization: Bearer <token>` (or the admin token).
    public var controlToken: String?
    /// When set, every admin request needs `Authorization: Bearer <token>`; when not, admin
    /// requests are taken from this host only.
    public var adminToken: String?
    public var logLevel: Logger.Level = .info
    /// HTTP worker threads; nil means one per core this process may run on.
    public var threads: Int?
    /// Web origins allowed to call the API from a browser: `*` or `https://host[:port]`.
    public var corsOrigins: [String] = []
    /// How often an idle event stream gets a comment line, so proxies keep it and dead peers
    /// are found.
    public var heartbeat: Duration = .seconds(15)
    /// How often play, view and click counts are written to the store (docs/STATS.md): at most
    /// this much is lost when the process is killed.
    public var statsFlush: Duration = .seconds(10)
    /// How screens are kept and judged (docs/SCREENS.md, "The fleet").
    public var fleet = FleetSettings()
    /// How uploads are limited and decoded (docs/MEDIA.md); decodes at once default to half the
    /// usable cores, at least 1.
    public var media: MediaSettings = {
        var settings = MediaSettings()
        settings.decodes = max(1, ServerConfiguration.onlineCores / 2)
        return settings
    }()
    /// Seconds a client may take to send a whole request, or stay idle between requests.
    public var connectionTimeout = 15
    /// Connections open at once (event-stream subscribers included).
    public var maxConnections = 16_384
    /// Memory per connection for the request line, headers and response headers, in bytes;
    /// request headers may use about half of it.
    public var connectionMemory = 16_384
    /// Whether reads and event streams are answered outside libmicrohttpd (`--fast-paths`).
    public var fastPaths = true
    /// Largest request body accepted, in bytes.
    public var maxBody = 16_384
    /// Whether webhooks may lead to loopback and private addresses (docs/WEBHOOKS.md).
    public var webhookAllowPrivate = false

    public init() {}

    /// The carousels this configuration defines: what an empty store is seeded with.
    public var definitions: [CarouselDefinition] {
        carousels ?? [
            CarouselDefinition(
                name: CarouselDefinition.defaultName, interval: interval, autoplay: autoplay, banners: banners)
        ]
    }

    /// `http://HOST:PORT` for the bound port, with an IPv6 host in brackets (`http://[::1]:8080`).
    public func url(boundPort port: Int) -> String {
        host.contains(":") ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }
}

/// A configuration value that cannot be used. `source` is the file, environment variable or
/// flag it came from; `field` the field inside a file.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    public let source: String
    public let field: String?
    public let message: String

    public init(source: String, field: String? = nil, message: String) {
        self.source = source
        self.field = field
        self.message = message
    }

    public var description: String {
        [source, field, message].compactMap { $0 }.joined(separator: ": ")
    }
}
