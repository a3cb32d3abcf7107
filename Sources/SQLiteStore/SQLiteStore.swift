import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

/// Carousels in a SQLite file (docs/STORE.md): WAL mode, one process at a time (`StoreLockFile`),
/// and one connection per purpose: admin changes on a connection that syncs every commit to
/// disk (`synchronous=FULL`), commands on one that leaves syncing to the WAL checkpoints
/// (`synchronous=NORMAL`: a commit survives the process being killed, not a power loss).
public final class SQLiteStore: StoreBackend {
    /// How many schema steps this build knows (`migrations`, each by name): the `user_version` it
    /// leaves, which builds from before steps were named compare.
    public static let schemaVersion = migrations.count
    /// How long a write waits, by default, for a lock held by another connection before the
    /// store is reported unavailable.
    public static let defaultBusyTimeout: Duration = .seconds(5)

    public let path: String
    public let identity: String
    /// Opened read-only (the file's permissions): reads are served, every write refused.
    public let isReadOnly: Bool
    let busyTimeout: Duration
    public var description: String { "SQLite store \(path)" }

    let lockFile: StoreLockFile
    let definitions = DecodedDefinitions()
    /// Admin changes, loading, import; each commit synced.
    let admin: Lock<SQLiteConnection>
    /// Commands' anchors; each commit in the WAL, synced at checkpoints.
    let commands: Lock<SQLiteConnection>

    /// Opens the store at `path`, creating it (and its folder) when missing, and migrates it.
    /// Throws `.unusable` when another process holds it, its schema is newer than this build's,
    /// or it is not a store; `.unavailable` when it cannot be read or written now.
    public init(path: String, busyTimeout: Duration = defaultBusyTimeout) throws(StoreError) {
        self.path = path
        self.busyTimeout = busyTimeout
        try Self.createFolder(of: path)
        do {
            lockFile = try StoreLockFile(storePath: path)
        } catch {
            throw .unusable(error.message)
        }
        do {
            let admin = try Self.connect(path, synchronous: "FULL", busyTimeout: busyTimeout)
            identity = try Self.migrate(admin, path: path)
            isReadOnly = admin.isReadOnly
            self.admin = Lock(admin)
            commands = Lock(try Self.connect(path, synchronous: "NORMAL", busyTimeout: busyTimeout))
        } catch let error as StoreError {
            throw error
        } catch let error as SQLiteError {
            throw Self.failure(error, path: path, busyTimeout: busyTimeout)
        } catch {
            throw .unavailable("\(path): \(error)")
        }
    }
}

extension SQLiteStore: CarouselStore {}
