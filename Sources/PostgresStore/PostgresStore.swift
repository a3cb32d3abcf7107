import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

/// Carousels in a PostgreSQL database that several replicas share (docs/STORE.md, PostgreSQL):
/// every change is one transaction on the carousel's row (`SELECT … FOR UPDATE`, so that writers
/// on different replicas take turns and none is lost) that ends with a `NOTIFY`; every replica
/// `LISTEN`s (`ChangeListener`) and reloads what changed. Two connections, one per purpose
/// (admin changes and loading; commands), each reconnected when it breaks, and the listener's.
/// While the server cannot be reached, every call throws `.unavailable`, fast.
public final class PostgresStore: StoreBackend {
    /// The schema this build writes; `migrations[n]` takes a database from version n to n + 1.
    public static let schemaVersion = migrations.count
    /// The channel every change is announced on; its payload is the carousel's name.
    static let channel = "banner_carousel_changes"
    /// How long a connection that failed is left alone before a write tries it again.
    static let retryPause: Duration = .seconds(1)

    public let description: String
    public var identity: String { status.withLock { $0.identity ?? "" } }
    public var isReadOnly: Bool { false }
    public var isShared: Bool { true }
    public var unreachable: String? { status.withLock { $0.unreachable } }

    let parameters: [(keyword: String, value: String)]
    let definitions = DecodedDefinitions()
    let admin = Lock(Slot())
    let commands = Lock(Slot())
    let status: Lock<Status>
    let listener: ChangeListener

    struct Slot {
        var connection: PostgresConnection?
        var lastAttempt: ContinuousClock.Instant?
        /// Why the last attempt to connect failed, while no connection succeeded since.
        var lastFailure: StoreError?
    }

    struct Status {
        /// From the database, once reached.
        var identity: String?
        /// Why the database cannot be reached now, as the listener last found; nil while it can.
        var unreachable: String?
    }

    /// A store on the database at `uri` (`postgres://…` or `postgresql://…`). Throws `.unusable`
    /// when the URI is malformed or the database's schema is newer than this build's. A database
    /// that cannot be reached now is no error: the store waits for it (`unreachable` says why).
    public init(uri: String) throws(StoreError) {
        let location = try Self.parse(uri)
        description = "PostgreSQL store \(location)"
        // Defaults first, so that the URI's own settings win (libpq: a later keyword wins).
        parameters = [
            ("connect_timeout", "5"), ("keepalives", "1"), ("keepalives_idle", "5"),
            ("keepalives_interval", "2"), ("keepalives_count", "3"),
            ("application_name", "banner-server"), ("dbname", uri),
        ]
        status = Lock(Status(unreachable: "\(location) has not been reached yet"))
        listener = ChangeListener(parameters: parameters, channel: Self.channel, describe: location)
        do {
            _ = try on(admin) { _ throws(PostgresError) in }
        } catch {
            if case .unusable = error { throw error }
            // Why, until the listener (started later) has tried for itself: `/readyz` says it.
            if case .unavailable(let reason) = error { status.withLock { $0.unreachable = reason } }
        }
    }

    deinit {
        listener.stop()
    }
}

extension PostgresStore: CarouselStore {}
