import Carousel
import TimeZones

// What a store keeps of proof of play (docs/STATS.md): each play once, whichever process saw it;
// views and clicks as counts per banner and quarter hour, which every process adds to.

/// One play: `banner` current in carousel `carousel` (its serial) for the screens of `audience`
/// (nil: screens of no audience, docs/AUDIENCES.md) from `startedAt`, shown for `shown` so far. A
/// process reports a play again as it goes on; the store keeps the longest.
public struct PlayRecord: Sendable, Hashable {
    public var carousel: Int64
    public var audience: String?
    public var banner: String
    public var startedAt: Timestamp
    public var shown: Duration

    public init(carousel: Int64, audience: String? = nil, banner: String, startedAt: Timestamp, shown: Duration) {
        self.carousel = carousel
        self.audience = audience
        self.banner = banner
        self.startedAt = startedAt
        self.shown = shown
    }

    /// When the play was last known to be going on.
    public var lastShownAt: Timestamp { startedAt + shown }

    /// What identifies a play, whoever reports it.
    public struct Key: Hashable, Sendable {
        public let carousel: Int64
        public let audience: String?
        public let startedAt: Timestamp
    }

    public var key: Key { Key(carousel: carousel, audience: audience, startedAt: startedAt) }
}

/// How the SQL stores keep the audience of a play or a count: in a column of the row's key, which
/// cannot be NULL, so '' stands for screens of no audience (no audience's name is empty).
public enum AudienceKeyColumn {
    public static func text(_ audience: String?) -> String { audience ?? "" }
    public static func audience(_ text: String?) -> String? { text.flatMap { $0.isEmpty ? nil : $0 } }
}

/// Views and clicks of one banner by the screens of one audience (nil: of none) in one quarter hour
/// (UTC, which every time zone's hours and days are made of: offsets are whole quarter hours), to
/// add to what the store has.
public struct EngagementCount: Sendable, Hashable {
    public var carousel: Int64
    public var audience: String?
    public var banner: String
    /// Seconds since the epoch; a multiple of 900.
    public var quarter: Int64
    public var views: Int64
    public var clicks: Int64

    public init(
        carousel: Int64, audience: String? = nil, banner: String, quarter: Int64, views: Int64, clicks: Int64
    ) {
        self.carousel = carousel
        self.audience = audience
        self.banner = banner
        self.quarter = quarter
        self.views = views
        self.clicks = clicks
    }

    /// Counts of the same key add up.
    public struct Key: Hashable, Sendable {
        public let carousel: Int64
        public let audience: String?
        public let banner: String
        public let quarter: Int64

        /// The key of `banner`'s counts of the quarter hour holding `time`.
        public init(carousel: Int64, audience: String?, banner: String, at time: Timestamp) {
            self.init(
                carousel: carousel, audience: audience, banner: banner, quarter: EngagementCount.quarter(of: time))
        }

        public init(carousel: Int64, audience: String?, banner: String, quarter: Int64) {
            self.carousel = carousel
            self.audience = audience
            self.banner = banner
            self.quarter = quarter
        }
    }

    public var key: Key { Key(carousel: carousel, audience: audience, banner: banner, quarter: quarter) }

    public init(_ key: Key, views: Int64, clicks: Int64) {
        self.init(
            carousel: key.carousel, audience: key.audience, banner: key.banner, quarter: key.quarter, views: views,
            clicks: clicks)
    }

    public static let quarterSeconds: Int64 = 900

    /// `counts` with those of the same key added up: one per key.
    public static func added(_ counts: [EngagementCount]) -> [EngagementCount] {
        var totals: [Key: EngagementCount] = [:]
        for count in counts {
            totals[count.key, default: EngagementCount(count.key, views: 0, clicks: 0)].views += count.views
            totals[count.key]!.clicks += count.clicks
        }
        return Array(totals.values)
    }

    /// The start of the quarter hour holding `time`, in seconds since the epoch.
    public static func quarter(of time: Timestamp) -> Int64 {
        let nanoseconds = quarterSeconds * 1_000_000_000
        let remainder = time.nanosecondsSinceEpoch % nanoseconds
        return (time.nanosecondsSinceEpoch - (remainder < 0 ? remainder + nanoseconds : remainder)) / 1_000_000_000
    }
}

/// A view a screen reported with an id it made (docs/STATS.md): counted once however often it
/// is sent, to whichever process, as long as the store keeps the id (`reportRetention`).
public struct IdentifiedView: Sendable, Hashable {
    public var carousel: Int64
    public var id: String
    /// The audience of the screen that saw it (nil: none).
    public var audience: String?
    public var banner: String
    /// The quarter hour it counts in (`EngagementCount.quarter`).
    public var quarter: Int64
    /// When the service was told of it: the id is kept from then.
    public var reportedAt: Timestamp

    public init(
        carousel: Int64, id: String, audience: String? = nil, banner: String, quarter: Int64, reportedAt: Timestamp
    ) {
        self.carousel = carousel
        self.id = id
        self.audience = audience
        self.banner = banner
        self.quarter = quarter
        self.reportedAt = reportedAt
    }

    /// What makes a repeat: the same id in the same carousel.
    public struct Key: Hashable, Sendable {
        public let carousel: Int64
        public let id: String
    }

    public var key: Key { Key(carousel: carousel, id: id) }

    /// The one view it adds when its id is new.
    public var count: EngagementCount {
        EngagementCount(carousel: carousel, audience: audience, banner: banner, quarter: quarter, views: 1, clicks: 0)
    }

    /// How long a store keeps a view's id: twice the age a view may have when reported, so that a
    /// view accepted once is recognised whenever it could be sent again.
    public static let reportRetention: Duration = .seconds(48 * 3600)
}

/// What a process hands its store at a flush.
public struct StatsBatch: Sendable, Equatable {
    public var plays: [PlayRecord]
    public var engagement: [EngagementCount]
    /// Views with ids: each adds one view to its banner's quarter unless its id is known.
    public var identifiedViews: [IdentifiedView]
    /// Ids of views reported before this are forgotten.
    public var forgetReportsBefore: Timestamp?

    public init(
        plays: [PlayRecord] = [], engagement: [EngagementCount] = [], identifiedViews: [IdentifiedView] = [],
        forgetReportsBefore: Timestamp? = nil
    ) {
        self.plays = plays
        self.engagement = engagement
        self.identifiedViews = identifiedViews
        self.forgetReportsBefore = forgetReportsBefore
    }

    /// Nothing to write (forgetting old ids can wait for a batch that writes).
    public var isEmpty: Bool { plays.isEmpty && engagement.isEmpty && identifiedViews.isEmpty }
}

/// What a store has of one carousel's screens of one audience (or of none) over a span of time.
public struct StatsRecords: Sendable, Equatable {
    /// Plays shown at some time in the span, by start.
    public var plays: [PlayRecord]
    /// Quarters that start in the span, by quarter then banner.
    public var engagement: [EngagementCount]

    public init(plays: [PlayRecord], engagement: [EngagementCount]) {
        self.plays = plays
        self.engagement = engagement
    }
}

extension PlayRecord {
    /// The same play as `other` (same carousel and start) reported again: the longer report.
    func merged(with other: PlayRecord) -> PlayRecord {
        shown >= other.shown ? self : other
    }
}

extension StatsRecords {
    /// `plays` and `engagement` kept in memory (MemoryStore), narrowed to `audience` and
    /// `from..<to` and sorted as a store answers.
    static func select(
        plays: some Sequence<PlayRecord>, engagement: some Sequence<EngagementCount>, of carousel: Int64,
        audience: String?, from: Timestamp, to: Timestamp
    ) -> StatsRecords {
        StatsRecords(
            plays: plays.filter {
                $0.carousel == carousel && $0.audience == audience && $0.startedAt < to && $0.lastShownAt >= from
            }
            .sorted { $0.startedAt < $1.startedAt },
            engagement: engagement.filter {
                $0.carousel == carousel && $0.audience == audience && Timestamp(secondsSinceEpoch: $0.quarter) >= from
                    && Timestamp(secondsSinceEpoch: $0.quarter) < to
            }.sorted { ($0.quarter, $0.banner) < ($1.quarter, $1.banner) })
    }
}

/// Proof of play: plays, views and clicks (docs/STATS.md).
public protocol PlayStore: AnyObject, Sendable {
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
}

extension PlayRecord {
    /// The columns a SQL store keeps a play in, in the order `init(row:)` reads them.
    public static let columns = "carousel, audience, banner, started_at, last_shown_at"

    /// A row of `columns` as read.
    public init(row: some SQLRow) {
        let startedAt = row.timestamp(3) ?? Timestamp(nanosecondsSinceEpoch: 0)
        self.init(
            carousel: row.integer(0) ?? 0, audience: AudienceKeyColumn.audience(row.text(1)), banner: row.text(2) ?? "",
            startedAt: startedAt, shown: (row.timestamp(4) ?? startedAt) - startedAt)
    }
}
