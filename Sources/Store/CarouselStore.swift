import Carousel
import Definitions
import TimeZones

/// What every store is, whatever it keeps: its name for operators, its identity, whether it can
/// be written, whether other processes share it, and its own threads and connections.
public protocol StoreBackend: AnyObject, Sendable {
    /// For logs and messages: `SQLite store data/carousel.db`, `memory store`.
    var description: String { get }
    /// Unique to this store's data, the same for every process using it: part of every ETag.
    var identity: String { get }

    /// True when the store can be read but not written (every change will be refused).
    var isReadOnly: Bool { get }

    /// True when other processes may write the store while this one runs (PostgreSQL): what this
    /// process wrote last is not necessarily what is stored.
    var isShared: Bool { get }

    /// Calls `onChange`, on a thread of the store's, whenever another process sharing the store
    /// may have changed carousels (PostgreSQL, docs/STORE.md). It may report this process's own
    /// changes too: a handler reloads and compares before it acts.
    func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void)

    /// Nil while the store can be reached; otherwise why not, for an operator (`GET /readyz`).
    var unreachable: String? { get }

    /// Stops the store's own threads and connections (PostgreSQL's listener); calls after it fail.
    func close()
}

/// Where carousels are kept (docs/STORE.md): one protocol per aggregate, each with its records
/// beside it, implemented per backend in a file of its own. Every method either did all it says,
/// durably as documented, or throws and did nothing. Methods may be called from any thread; each
/// is one transaction.
public protocol CarouselStore: StoreBackend, CarouselDefinitionStore, PlayStore, ScreenStore, MediaStore, HistoryStore,
    WebhookStore, TokenStore
{}

extension StoreBackend {
    public var isShared: Bool { false }

    /// Stores one process owns see no change they did not make: nothing to observe.
    public func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void) {}

    /// Stores one process owns are reachable while it runs.
    public var unreachable: String? { nil }

    public func close() {}
}

/// What a store shared with other processes reports (`observeChanges`).
public enum StoreChange: Sendable, Equatable {
    /// The carousel of this name was created, changed or deleted; with what it became, when the
    /// store could say so without being read again.
    case carousel(name: String, note: ChangeNote? = nil)
    /// The store is reachable (first time, or again): anything may have changed meanwhile,
    /// unheard of.
    case everything
    /// The store cannot be reached; the reason, for an operator. What is in memory is all there
    /// is until `.everything`.
    case unreachable(String)
    /// A named token was created or deleted.
    case tokens
    /// A change was scheduled, cancelled or made (docs/SCHEDULED.md).
    case pending
}

/// What a change made of a stored carousel, as its notification carries it: a process that knows
/// the carousel at `revision` can follow an anchor-only change (a command) without a read.
public struct ChangeNote: Sendable, Equatable {
    public let serial: Int64
    public let revision: UInt64
    public let anchor: CarouselAnchor

    public init(serial: Int64, revision: UInt64, anchor: CarouselAnchor) {
        self.serial = serial
        self.revision = revision
        self.anchor = anchor
    }
}

/// Why a store did not do what it was asked.
public enum StoreError: Error, Equatable, CustomStringConvertible {
    case duplicate(name: String)
    case notFound(name: String)
    /// The stored revision is not the one the change was based on.
    case conflict(name: String, revision: UInt64)
    /// The store cannot be written or read now (read-only, full, locked, unreachable); the
    /// detail says what failed and what an operator can do. Retrying later may succeed.
    case unavailable(String)
    /// The store cannot be used by this process at all (newer schema, held by another process,
    /// not a store); the detail says why. Exit 2 at start.
    case unusable(String)
    /// The change shows library images that are not stored (deleted meanwhile): their ids.
    case missingMedia([String])
    /// The write was to make pending change `id`, which is no longer pending: made by another
    /// process, or cancelled. Nothing was written.
    case notPending(id: Int64)

    public var description: String {
        switch self {
        case .duplicate(let name): "a carousel named '\(name)' exists already"
        case .notFound(let name): "no carousel named '\(name)'"
        case .conflict(let name, let revision): "carousel '\(name)' is at revision \(revision) now"
        case .unavailable(let detail), .unusable(let detail): detail
        case .missingMedia(let ids):
            "the media library has no image \(ids.joined(separator: ", ")) (deleted while this change was made)"
        case .notPending(let id): "change \(id) is no longer pending (made already, or cancelled)"
        }
    }
}
