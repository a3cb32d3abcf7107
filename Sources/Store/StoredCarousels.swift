import Carousel
import Definitions
import TimeZones

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

/// Carousels and their anchors: the definitions operators edit and the anchor each state is
/// computed from (docs/STORE.md).
public protocol CarouselDefinitionStore: AnyObject, Sendable {
    /// Every carousel, by name.
    func loadAll() throws(StoreError) -> [StoredCarousel]

    /// A new carousel at revision 1, kept as its first revision and in the audit log. Durable
    /// (synced) before it returns. Throws `.duplicate` when the name is taken, `.missingMedia` when a library image
    /// it shows is not stored.
    func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel

    /// The carousel named `name` as stored now; nil when there is none.
    func load(named name: String) throws(StoreError) -> StoredCarousel?

    /// Changes a stored carousel in one transaction that holds it against every other writer,
    /// other processes sharing the store included: `decide` is given the carousel as stored now
    /// and returns what to store instead (same name and serial) with the audit log's entries for
    /// it (appended in the same transaction), or nil to store nothing.
    /// Returns what is stored when the transaction ends. A write that makes a pending change
    /// (`CarouselWrite.applying`) deletes it in the same transaction; when it is no longer pending
    /// nothing is written and `.notPending` is thrown. A `.command` write survives the process
    /// being killed before it returns (not necessarily a power loss); an `.admin` write is
    /// durable (synced), and when it moves the revision, that revision is kept (`Revision`, in the
    /// same transaction; older ones pruned by `RevisionRetention`). Throws `.notFound` when `key`
    /// is no longer stored; `.missingMedia` when an `.admin` change brings in a library image that
    /// is not stored (checked in the transaction, as `deleteMedia` checks its uses).
    ///
    /// `expected` is what the caller believes is stored. A store may first decide on it and write
    /// the result only if the row is still exactly that (one round trip to a database instead of
    /// a transaction of four), calling `decide` again on the row as stored when it is not: so
    /// `decide` must start afresh at each call.
    func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel

    /// Deletes the carousel, and its history, when its revision is `expectedRevision`; the
    /// audit log keeps the deletion, by `attribution`. Durable before it returns.
    func delete(_ key: CarouselKey, expectedRevision: UInt64, by attribution: Attribution) throws(StoreError)

    /// Seeding: in one transaction, when the store holds no carousel, creates one per
    /// definition (anchor from `anchor`, first revision and audit entry by `attribution`);
    /// returns whether it did. Several processes starting together on an empty shared store seed it once.
    func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool

    /// `banner-server import`: in one transaction, each definition replaces the carousel of its
    /// name (anchor from `anchor(definition, existing)`, revision one more) or creates it; each
    /// a revision and an audit entry by `attribution`.
    func importDefinitions(
        _ definitions: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor, by attribution: Attribution
    ) throws(StoreError)
}

extension CarouselDefinitionStore {
    /// A change decided on the row as stored (no expectation to try first).
    public func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        try modify(key, purpose, expecting: nil, decide)
    }
}

/// How durable a write must be before it returns (docs/STORE.md, durability), and whether it
/// is kept in the carousel's history.
public enum WritePurpose: Sendable, Equatable {
    /// A command (move, pause, resume): survives the process being killed.
    case command
    /// An admin change: survives a power loss too; a change of the revision is kept as a
    /// revision, by whom and when.
    case admin(Attribution)

    public var isAdmin: Bool { attribution != nil }

    /// Who made an admin change; nil for a command.
    public var attribution: Attribution? {
        if case .admin(let attribution) = self { attribution } else { nil }
    }

    /// The revision to keep when `changed` is written over `previous`: none for a command, or
    /// when the revision stays.
    public func revision(of changed: StoredCarousel, over previous: StoredCarousel) -> Revision? {
        guard let attribution, changed.revision != previous.revision else { return nil }
        return Revision(changed.revision, of: changed.definition, over: previous.definition, attribution)
    }
}
