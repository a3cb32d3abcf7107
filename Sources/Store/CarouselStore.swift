import Carousel
import Definitions

/// A carousel as a store keeps it: the definition operators edit, its revision (the admin API's
/// ETag), the anchor its state is computed from, and a serial number never given twice in one
/// store (a carousel deleted and created again is another carousel to caches).
public struct StoredCarousel: Sendable, Hashable {
    public var definition: CarouselDefinition
    public var revision: UInt64
    public var anchor: CarouselAnchor
    public var serial: Int64

    public init(definition: CarouselDefinition, revision: UInt64, anchor: CarouselAnchor, serial: Int64) {
        self.definition = definition
        self.revision = revision
        self.anchor = anchor
        self.serial = serial
    }

    public var name: String { definition.name }
    public var key: CarouselKey { CarouselKey(name: name, serial: serial) }
}

/// Which carousel a change is for: the name, for messages, and the serial, so that a change
/// meant for a carousel that was deleted never lands on a new one of the same name.
public struct CarouselKey: Sendable, Hashable {
    public let name: String
    public let serial: Int64

    public init(name: String, serial: Int64) {
        self.name = name
        self.serial = serial
    }
}

/// Where carousels are kept (docs/STORE.md). Every method either did all it says, durably as
/// documented, or throws and did nothing. Methods may be called from any thread; each is one
/// transaction.
public protocol CarouselStore: AnyObject, Sendable {
    /// For logs and messages: `SQLite store data/carousel.db`, `memory store`.
    var description: String { get }
    /// Unique to this store's data, the same for every process using it: part of every ETag.
    var identity: String { get }

    /// True when the store can be read but not written (every change will be refused).
    var isReadOnly: Bool { get }

    /// Every carousel, by name.
    func loadAll() throws(StoreError) -> [StoredCarousel]

    /// A new carousel at revision 1. Durable (synced) before it returns.
    /// Throws `.duplicate` when the name is taken.
    func create(_ definition: CarouselDefinition, anchor: CarouselAnchor) throws(StoreError) -> StoredCarousel

    /// Replaces the definition (of the same name) and the anchor when the stored revision is
    /// `expectedRevision`; returns the new revision (one more). Durable (synced) before it
    /// returns. Throws `.notFound`, or `.conflict` when the revision moved.
    func update(
        _ key: CarouselKey, to definition: CarouselDefinition, anchor: CarouselAnchor, expectedRevision: UInt64
    ) throws(StoreError) -> UInt64

    /// Replaces the anchor after a command. Survives the process being killed before it returns
    /// (not necessarily a power loss). Throws `.notFound`.
    func saveAnchor(_ anchor: CarouselAnchor, of key: CarouselKey) throws(StoreError)

    /// Deletes the carousel when its revision is `expectedRevision`. Durable before it returns.
    func delete(_ key: CarouselKey, expectedRevision: UInt64) throws(StoreError)

    /// `banner-server import`: in one transaction, each definition replaces the carousel of its
    /// name (anchor from `anchor(definition, existing)`, revision one more) or creates it.
    func importDefinitions(
        _ definitions: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor
    ) throws(StoreError)
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

    public var description: String {
        switch self {
        case .duplicate(let name): "a carousel named '\(name)' exists already"
        case .notFound(let name): "no carousel named '\(name)'"
        case .conflict(let name, let revision): "carousel '\(name)' is at revision \(revision) now"
        case .unavailable(let detail), .unusable(let detail): detail
        }
    }
}
