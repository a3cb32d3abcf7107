import Definitions
import TimeZones

/// Who made a write, when, and in which request: what its revision (docs/HISTORY.md) and its
/// audit entry (docs/AUDIT.md) keep.
public struct Attribution: Sendable, Hashable {
    /// `env:admin`, `loopback`, a token's name, or `import` / `seed` for the command line's
    /// and the first start's writes.
    public let actor: String
    public let at: Timestamp
    /// The revision this change restores, when it is a restore: its summary says so.
    public let restoring: UInt64?
    public let requestID: String?

    public init(actor: String, at: Timestamp, restoring: UInt64? = nil, requestID: String? = nil) {
        self.actor = actor
        self.at = at
        self.restoring = restoring
        self.requestID = requestID
    }

    public init(by requester: Requester, at: Timestamp, restoring: UInt64? = nil) {
        self.init(actor: requester.actor, at: at, restoring: restoring, requestID: requester.requestID)
    }

    public var requester: Requester { Requester(actor: actor, requestID: requestID) }
}

/// One entry of a carousel's history: `GET /carousels/{name}/revisions`.
public struct RevisionRecord: Sendable, Hashable {
    public let revision: UInt64
    public let at: Timestamp
    public let actor: String
    /// What changed since the revision before, in words (`CarouselDefinition.summary(since:)`).
    public let summary: String

    public init(revision: UInt64, at: Timestamp, actor: String, summary: String) {
        self.revision = revision
        self.at = at
        self.actor = actor
        self.summary = summary
    }
}

/// A revision with the definition as it was: what a store keeps beside the carousel's row,
/// written in the same transaction.
public struct Revision: Sendable, Hashable {
    public let record: RevisionRecord
    public let definition: CarouselDefinition

    public init(record: RevisionRecord, definition: CarouselDefinition) {
        self.record = record
        self.definition = definition
    }

    /// Revision `revision`, `definition`, made by `attribution` over `previous` (nil: a new
    /// carousel, at revision 1).
    public init(
        _ revision: UInt64 = 1, of definition: CarouselDefinition, over previous: CarouselDefinition?,
        _ attribution: Attribution
    ) {
        var summary = definition.summary(since: previous)
        if let restored = attribution.restoring {
            summary = "restored revision \(restored)" + (summary == "no change" ? "" : ": \(summary)")
        }
        record = RevisionRecord(revision: revision, at: attribution.at, actor: attribution.actor, summary: summary)
        self.definition = definition
    }

    /// The stored definition's text.
    public var text: String { definition.storedText }
}

/// How much of each carousel's history is kept: the last `count` revisions or those of the last
/// `age`, whichever is more. Older ones are deleted in the transaction that adds a revision.
public enum RevisionRetention {
    public static let count: UInt64 = 1000
    public static let age: Duration = .seconds(90 * 24 * 3600)

    /// Once `kept` is stored, its carousel's revisions numbered up to `through` and made before
    /// `before` may be deleted; nil when none may.
    public static func pruning(after kept: RevisionRecord) -> (through: UInt64, before: Timestamp)? {
        kept.revision > count ? (kept.revision - count, kept.at - age) : nil
    }
}

extension RevisionRecord {
    /// Carousel parameter 1's history, newest first: what both SQL stores ask, in `dialect`.
    public static func selectAll(_ dialect: SQLDialect) -> String {
        "SELECT revision, at, actor, summary FROM revisions WHERE carousel = \(dialect.parameter(1)) "
            + "ORDER BY revision DESC"
    }

    /// A row of `selectAll` as read.
    public init(row: some SQLRow) {
        self.init(
            revision: UInt64(clamping: row.integer(0) ?? 0),
            at: row.timestamp(1) ?? Timestamp(nanosecondsSinceEpoch: 0),
            actor: row.text(2) ?? "", summary: row.text(3) ?? "")
    }

    /// Revision parameter 2 of carousel parameter 1, with its definition (the fifth column).
    public static func selectOne(_ dialect: SQLDialect) -> String {
        "SELECT revision, at, actor, summary, definition FROM revisions WHERE carousel = \(dialect.parameter(1)) "
            + "AND revision = \(dialect.parameter(2))"
    }
}
