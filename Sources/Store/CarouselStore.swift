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

    /// True when other processes may write the store while this one runs (PostgreSQL): what this
    /// process wrote last is not necessarily what is stored.
    var isShared: Bool { get }

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

    /// Calls `onChange`, on a thread of the store's, whenever another process sharing the store
    /// may have changed carousels (PostgreSQL, docs/STORE.md). It may report this process's own
    /// changes too: a handler reloads and compares before it acts.
    func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void)

    /// Nil while the store can be reached; otherwise why not, for an operator (`GET /readyz`).
    var unreachable: String? { get }

    /// Stops the store's own threads and connections (PostgreSQL's listener); calls after it fail.
    func close()

    /// Seeding: in one transaction, when the store holds no carousel, creates one per
    /// definition (anchor from `anchor`, first revision and audit entry by `attribution`);
    /// returns whether it did. Several processes starting together on an empty shared store seed it once.
    func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool

    /// Carousel `serial`'s history as kept, newest first.
    func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord]

    /// Revision `revision` of carousel `serial`, with its definition; nil when it is not kept.
    func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision?

    /// Proof of play (docs/STATS.md): keeps each play of `batch` once, the longest report of it
    /// whichever process made it, and adds its views and clicks to what is stored; in one
    /// transaction that survives the process being killed before it returns.
    func record(_ batch: StatsBatch) throws(StoreError)

    /// The plays of carousel `serial` for the screens of `audience` (nil: of none) shown at some
    /// time in `from..<to`, and their views and clicks of the quarter hours that start in it.
    func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords

    /// The play of carousel `serial` for the screens of `audience` that started last: a process
    /// that finds a banner current goes on with it when it is that banner's and was still being
    /// shown then.
    func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord?

    /// The fleet (docs/SCREENS.md): merges each sighting into its screen's row by
    /// `ScreenSighting.merged(into:timeout:)`, in one transaction that survives the process being
    /// killed. A sighting of a carousel no longer stored is dropped.
    func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError)

    /// Every screen's row, of every carousel stored.
    func screens() throws(StoreError) -> [ScreenRecord]

    /// Forgets the screens not heard from since `cutoff`; returns how many.
    func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int

    /// The media library (docs/MEDIA.md): stores `media` — its record and every file — in one
    /// transaction, durable (synced) before it returns. False when an image of that id is stored
    /// already (then nothing changes: the id is the content's digest).
    /// The audit log keeps the upload, by `attribution`.
    func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool

    /// Every image's record, oldest first; `id`'s alone (or none) when given.
    func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord]

    /// The bytes of one file of an image; nil when there is no such image or file.
    func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]?

    /// Deletes the image and its files, unless a stored carousel's banner shows it (read in the
    /// same transaction: a write bringing the image in at the same moment either comes first
    /// and is seen, or comes after and finds it gone). Durable before it returns; the audit log
    /// keeps a deletion, by `attribution`.
    func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion

    /// Named tokens (docs/TOKENS.md): stores `token`, durable (synced) before it returns, and tells
    /// the other processes sharing the store (`StoreChange.tokens`). False when its name is taken
    /// (then nothing changes). The audit log keeps the creation (its name, never a secret), by
    /// `attribution`.
    func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool

    /// Every named token, by name.
    func tokens() throws(StoreError) -> [TokenRecord]

    /// Deletes the token named `name` and tells the other processes; false when there is none.
    /// The audit log keeps a deletion, by `attribution`.
    func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool

    /// Webhooks (docs/WEBHOOKS.md): stores `webhook` (its id is the store's), durable before it
    /// returns, with its audit entry (`webhook.create` by `attribution`, target its id and URL);
    /// nil, storing nothing, when `limit` webhooks are kept already: counted in the same
    /// transaction, so that requests racing each other (on any replica) never pass it.
    func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?

    /// Every webhook, by id.
    func webhooks() throws(StoreError) -> [WebhookRecord]

    /// Deletes webhook `id` and its deliveries; false when there is none. The audit log keeps the deletion, by
    /// `attribution`.
    func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool

    /// Webhook deliveries (docs/WEBHOOKS.md): queues one delivery of each event per webhook that
    /// asked for its type, due at once, in one transaction that survives the process being
    /// killed; an event queued for a webhook already (same id) is not queued again. (A write's
    /// own events, `QueuedEvent.told` of its audit entries, and those of creations, deletions and imports, are
    /// queued by the store in the write's transaction.)
    func queue(_ events: [QueuedEvent]) throws(StoreError)

    /// Claims the deliveries due at `now`, soonest first, `limit` at most, until `until`: no
    /// process, this one or another sharing the store, claims them again before then.
    func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError) -> [DueDelivery]

    /// Keeps how delivery `number`'s attempt went and releases its claim: delivered when the
    /// attempt was, else due again at `retryAt` (nil: given up).
    func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError)

    /// When the soonest delivery waiting is due (one claimed: when its claim runs out); nil when
    /// none waits.
    func nextDeliveryDue() throws(StoreError) -> Timestamp?

    /// Webhook `webhook`'s deliveries, newest first, `limit` at most.
    func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord]

    /// Forgets the deliveries delivered or given up before `cutoff`; returns how many.
    func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int

    /// The audit log's entries `query` asks for, newest first (docs/AUDIT.md).
    func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord]

    /// Scheduled changes (docs/SCHEDULED.md): keeps `change` (the id given is ignored: the answer
    /// has the store's), durable before it returns, with its audit entry (`change.schedule` by its
    /// requester), and tells the other processes sharing the store (`StoreChange.pending`). Throws
    /// `.notFound` when its carousel is no longer stored.
    func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange

    /// Every pending change, by `at`, then id.
    func pendingChanges() throws(StoreError) -> [PendingChange]

    /// Deletes pending change `id` of carousel `carousel` (a serial) with its audit entry
    /// (`change.cancel` by `attribution`) and tells the other processes; false when it is not one
    /// of its pending changes (made, cancelled, another carousel's, never was).
    func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool

    /// `banner-server import`: in one transaction, each definition replaces the carousel of its
    /// name (anchor from `anchor(definition, existing)`, revision one more) or creates it; each
    /// a revision and an audit entry by `attribution`.
    func importDefinitions(
        _ definitions: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor, by attribution: Attribution
    ) throws(StoreError)
}

extension CarouselStore {
    /// Every image's record, oldest first.
    public func mediaRecords() throws(StoreError) -> [MediaRecord] { try mediaRecords(id: nil) }

    /// The record of image `id`; nil when there is none.
    public func mediaRecord(_ id: String) throws(StoreError) -> MediaRecord? { try mediaRecords(id: id).first }

    /// A change decided on the row as stored (no expectation to try first).
    public func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        try modify(key, purpose, expecting: nil, decide)
    }

    public var isShared: Bool { false }

    /// Stores one process owns see no change they did not make: nothing to observe.
    public func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void) {}

    /// Stores one process owns are reachable while it runs.
    public var unreachable: String? { nil }

    public func close() {}
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
