import BannerAPI
import Carousel
import Definitions
import Logging
import MicroHTTP
import Store
import TimeZones
import WebhookSender

/// The running service: the store, the carousels it holds, and the HTTP server in front of them.
public final class CarouselService: Sendable {
    private let parts: ServiceParts
    private let server: HTTPServer
    /// Held open for the life of the service (a SQLite store's file lock goes with it).
    private let store: any CarouselStore

    /// The bound port (the real one when the configuration asked for port 0).
    public var port: Int { server.port }

    private init(parts: ServiceParts, server: HTTPServer, store: any CarouselStore) {
        self.parts = parts
        self.server = server
        self.store = store
    }

    /// Clients following an event stream now.
    public var eventSubscribers: Int { parts.eventSubscribers }

    /// Why the service did not start.
    public enum StartError: Error, CustomStringConvertible {
        case store(StoreError)
        case server(HTTPServerError)

        /// 2 when the store cannot be used by this process at all (as for an invalid
        /// configuration), 1 otherwise.
        public var exitCode: Int32 {
            if case .store(.unusable) = self { 2 } else { 1 }
        }

        public var description: String {
            switch self {
            case .store(let error): "\(error)"
            case .server(let error): "\(error)"
            }
        }
    }

    /// Opens the store (seeding it from the configuration when empty), binds the port, then
    /// starts every carousel's clock.
    public static func start(
        configuration: ServiceConfiguration, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) throws(StartError) -> CarouselService {
        let store: any CarouselStore
        do {
            store = try configuration.store.open()
        } catch {
            throw .store(error)
        }
        let seeding = configuration.definitions
        let seed: @Sendable () throws(StoreError) -> [StoredCarousel] = {
            let outcome = try StoreSeeding.load(
                store, seeding: seeding, images: configuration.libraryFiles, limits: configuration.media.limits,
                now: clock())
            report(outcome, of: store, configuration: configuration, logger: logger)
            return outcome.carousels
        }
        var loaded: [StoredCarousel] = []
        var beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)?
        do {
            loaded = try seed()
        } catch {
            // A shared store that cannot be reached yet is waited for (docs/STORE.md): the replica
            // serves nothing and is not ready until it is reached; anything else stops it here.
            guard case .unavailable = error, let reason = store.unreachable else { throw .store(error) }
            logger.warning("\(reason). Waiting for it: /readyz answers 503 until the carousels are loaded")
            beforeFirstLoad = { () throws(StoreError) in _ = try seed() }
        }
        let access = AccessPolicy(controlToken: configuration.controlToken, adminToken: configuration.adminToken)
        let parts = ServiceParts(
            store: store, loaded: loaded, corsOrigins: configuration.corsOrigins, heartbeat: configuration.heartbeat,
            access: access, logger: logger, clock: clock, statsFlushInterval: configuration.statsFlush,
            fleet: configuration.fleet, media: configuration.media,
            webhookAllowPrivate: configuration.webhookAllowPrivate,
            deliver: WebhookSender(allowPrivate: configuration.webhookAllowPrivate).send,
            beforeFirstLoad: beforeFirstLoad)
        let serverConfiguration = ServerConfiguration(
            host: configuration.host, port: configuration.port,
            threads: configuration.threads ?? ServerConfiguration.onlineCores,
            connectionTimeoutSeconds: configuration.connectionTimeout, connectionLimit: configuration.maxConnections,
            connectionMemoryLimit: configuration.connectionMemory, maxBodySize: configuration.maxBody,
            fastPaths: configuration.fastPaths,
            errorLog: { [logger] level, message in logger.log(level == .warning ? .warning : .notice, message) })
        let server: HTTPServer
        do {
            server = try HTTPServer(configuration: serverConfiguration, handler: parts.api, streams: parts.streams)
        } catch {
            throw .server(error)
        }
        parts.start()
        let listed =
            loaded.prefix(10).map { "\($0.name): \($0.definition.banners.count) banners" }
            + (loaded.count > 10 ? ["…"] : [])
        logger.info(
            "\(loaded.count) carousel\(loaded.count == 1 ? "" : "s") from \(store.description) "
                + "(\(listed.joined(separator: ", "))); "
                + "\(access.summary), \(serverConfiguration.threads) worker thread\(serverConfiguration.threads == 1 ? "" : "s")"
        )
        return CarouselService(parts: parts, server: server, store: store)
    }

    /// What loading the store at start found, for the operator.
    private static func report(
        _ outcome: (carousels: [StoredCarousel], seeded: Bool, differing: [String]), of store: any CarouselStore,
        configuration: ServiceConfiguration, logger: Logger
    ) {
        if store.isReadOnly {
            logger.warning(
                "\(store.description) is read-only: reads are served, every change is refused (503) until the "
                    + "file, its -wal and -shm files and its folder are writable and banner-server is restarted")
        }
        if outcome.seeded {
            logger.notice(
                "\(store.description) was empty: seeded it with \(names(configuration.definitions)) from "
                    + (configuration.configurationFile ?? "the built-in defaults"))
        } else if let file = configuration.configurationFile, !outcome.differing.isEmpty {
            logger.warning(
                "\(file) differs from \(store.description) for \(names(outcome.differing, quoted: true)); the store "
                    + "is what is served. To serve the file instead: banner-server import \(file)")
        }
    }

    /// `default, lobby` or `'default', 'lobby'`.
    private static func names(_ definitions: [CarouselDefinition]) -> String {
        "carousel\(definitions.count == 1 ? "" : "s") " + definitions.map(\.name).joined(separator: ", ")
    }

    private static func names(_ names: [String], quoted: Bool) -> String {
        "carousel\(names.count == 1 ? "" : "s") " + names.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// Stops the clocks, ends every event stream, writes the last play, view and click counts,
    /// stops accepting connections, and finishes or refuses requests in progress.
    public func stop() {
        parts.stop()  // while the store is open: the last counts go to it
        store.close()  // no more changes heard from other processes
        server.stop()
    }
}
