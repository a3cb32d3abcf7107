import Carousel
import Digest
import Threading
import TimeZones

// What a store keeps of the fleet (docs/SCREENS.md, "The fleet"): one row per screen and
// carousel, its presence and its latest receipt, shared by every process using the store.

/// A screen as the store keeps it.
public struct ScreenRecord: Sendable, Equatable {
    /// The carousel's serial.
    public var carousel: Int64
    public var id: ScreenID
    /// The last time any process heard from it (a request, or its event stream still open).
    public var lastSeen: Timestamp
    /// When it was first heard after a silence longer than the timeout: its presence began then.
    public var heardSince: Timestamp
    public var via: ScreenVia
    /// At most `ScreenRecord.userAgentLimit` characters.
    public var userAgent: String
    /// The audience it declared when last heard (docs/AUDIENCES.md); nil: none.
    public var audience: String?
    /// Its latest receipt (the one shown last), judged; nil before its first.
    public var receipt: JudgedReceipt?
    /// The key that claimed it (the first it was heard with); nil: unclaimed, anyone may report it.
    public var claim: ScreenKey?

    public init(
        carousel: Int64, id: ScreenID, lastSeen: Timestamp, heardSince: Timestamp, via: ScreenVia, userAgent: String,
        audience: String? = nil, receipt: JudgedReceipt? = nil, claim: ScreenKey? = nil
    ) {
        self.carousel = carousel
        self.id = id
        self.lastSeen = lastSeen
        self.heardSince = heardSince
        self.via = via
        self.userAgent = userAgent
        self.audience = audience
        self.receipt = receipt
        self.claim = claim
    }

    /// User agents are kept cut to this many characters: enough to tell a kiosk from a phone.
    public static let userAgentLimit = 200

    /// What identifies a screen's row.
    public struct Key: Hashable, Sendable {
        public let carousel: Int64
        public let id: ScreenID

        public init(carousel: Int64, id: ScreenID) {
            self.carousel = carousel
            self.id = id
        }
    }

    public var key: Key { Key(carousel: carousel, id: id) }
}

/// The secret a screen proves its id with (docs/SCREENS.md, "A screen's own reports"): the first
/// key a screen is heard with claims it, and from then on only what is sent with that key changes
/// its row. Kept as its SHA-256 only: a copy of the store does not hand out the keys.
public struct ScreenKey: Hashable, Sendable {
    /// 64 hexadecimal digits.
    public let digest: String

    /// Nil when `text` is not a key by `rule`.
    public init?(_ text: String) {
        if let known = Self.recent.withLock({ $0[text] }) {
            digest = known
            return
        }
        var text = text
        let digest = text.withUTF8 { bytes -> String? in
            guard (16...128).contains(bytes.count), bytes.allSatisfy(Self.isAllowed) else { return nil }
            return SHA256.hex(of: UnsafeRawBufferPointer(bytes))
        }
        guard let digest else { return nil }
        self.digest = digest
        Self.recent.withLock { recent in
            if recent.count >= Self.recentLimit { recent.removeAll(keepingCapacity: true) }
            recent[text] = digest
        }
    }

    /// Valid keys heard lately and their digests: a screen sends its key with every poll and
    /// receipt, and hashing it was a sixth of a receipt's instructions (docs/PERFORMANCE.md, "What a
    /// receipt costs"). Emptied when full: strangers sending new keys cost it at most a few MiB.
    private static let recent = Lock<[String: String]>([:])
    static let recentLimit = 20_000

    /// A key as a stored row holds it.
    public init(digest: String) { self.digest = digest }

    /// What an invalid key is told.
    public static let rule = "a screen key is 16 to 128 of A-Z, a-z, 0-9, '-' and '_' (the page makes 32 at random)"

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }

    /// Whether a screen claimed by `claim` (nil: by none) may be reported with this key (nil: none).
    public static func admits(_ key: ScreenKey?, to claim: ScreenKey?) -> Bool {
        claim == nil || key == claim
    }
}

/// How a screen was last heard from.
public enum ScreenVia: String, Sendable {
    /// It holds an event stream.
    case stream
    /// It polls (or reports) by requests.
    case poll
}

/// A receipt with what the process that took it found (docs/SCREENS.md, "Judging a screen").
public struct JudgedReceipt: Sendable, Equatable {
    public var banner: String
    public var version: UInt64
    public var shownAt: Timestamp
    /// How long after the carousel's change the screen flipped (negative: before it); nil when the
    /// carousel's history does not reach back to `shownAt`.
    public var lateness: Duration?
    /// Why the receipt puts its screen out of step; nil when it does not.
    public var outOfStep: OutOfStepReason?
    /// Since when the screen's receipts have said what this one says (in step, or this reason).
    public var verdictSince: Timestamp
    /// The screen's estimate of its clock's offset from the service's, and of the round trip.
    public var offsetMs: Int64?
    public var rttMs: Int64?

    public init(
        banner: String, version: UInt64, shownAt: Timestamp, lateness: Duration?, outOfStep: OutOfStepReason?,
        verdictSince: Timestamp, offsetMs: Int64?, rttMs: Int64?
    ) {
        self.banner = banner
        self.version = version
        self.shownAt = shownAt
        self.lateness = lateness
        self.outOfStep = outOfStep
        self.verdictSince = verdictSince
        self.offsetMs = offsetMs
        self.rttMs = rttMs
    }

    /// Of the receipt `kept` and one `arriving`, the one to keep: an older receipt never replaces
    /// a newer one, and a verdict keeps its `since` while receipts repeat it.
    static func latest(kept: JudgedReceipt?, arriving: JudgedReceipt?) -> JudgedReceipt? {
        guard var arriving, kept.map({ $0.shownAt <= arriving.shownAt }) ?? true else { return kept }
        if let kept, kept.outOfStep == arriving.outOfStep { arriving.verdictSince = kept.verdictSince }
        return arriving
    }
}

/// What one process heard of a screen since its last write, to merge into the stored row
/// (`CarouselStore.saveScreens`).
public struct ScreenSighting: Sendable, Equatable {
    public var key: ScreenRecord.Key
    public var heardAt: Timestamp
    public var via: ScreenVia
    public var userAgent: String
    /// The audience it declared (nil: none).
    public var audience: String?
    /// The latest receipt heard, if any; its `verdictSince` is its own arrival, which the store
    /// keeps older when the stored receipt said the same.
    public var receipt: JudgedReceipt?
    /// The key it was heard with (nil: none): it claims an unclaimed screen; a sighting of a screen
    /// claimed by another key changes nothing.
    public var claim: ScreenKey?

    public init(
        key: ScreenRecord.Key, heardAt: Timestamp, via: ScreenVia, userAgent: String, audience: String? = nil,
        receipt: JudgedReceipt?, claim: ScreenKey? = nil
    ) {
        self.key = key
        self.heardAt = heardAt
        self.via = via
        // No more characters than bytes: most user agents are shorter than the limit in bytes, and
        // are kept without walking their characters (a sighting is made for every receipt).
        self.userAgent =
            userAgent.utf8.count <= ScreenRecord.userAgentLimit
            ? userAgent : String(userAgent.prefix(ScreenRecord.userAgentLimit))
        self.audience = audience
        self.receipt = receipt
        self.claim = claim
    }

    /// The row as it is after this sighting, given the row stored before (nil: a new screen); the
    /// rule every store applies, in one place for the memory store and the tests.
    public func merged(into stored: ScreenRecord?, timeout: Duration) -> ScreenRecord {
        guard var row = stored else {
            return ScreenRecord(
                carousel: key.carousel, id: key.id, lastSeen: heardAt, heardSince: heardAt, via: via,
                userAgent: userAgent, audience: audience, receipt: receipt, claim: claim)
        }
        // Another key's sighting (one that lost a race to claim it, on another process) is dropped.
        guard ScreenKey.admits(claim, to: row.claim) else { return row }
        row.claim = row.claim ?? claim
        if heardAt - row.lastSeen > timeout { row.heardSince = heardAt }
        if heardAt >= row.lastSeen {
            row.lastSeen = heardAt
            row.via = via
            row.userAgent = userAgent
            row.audience = audience
        }
        row.receipt = JudgedReceipt.latest(kept: row.receipt, arriving: receipt)
        return row
    }

    /// Takes in a sighting of the same screen heard after this one was (or while it waited to be
    /// written): the latest presence, the latest receipt, by the rules of `merged(into:timeout:)`.
    /// The fleet notes only sightings its screen's claim admits, so the first claim stands.
    public mutating func absorb(_ other: ScreenSighting) {
        claim = claim ?? other.claim
        if other.heardAt >= heardAt {
            heardAt = other.heardAt
            via = other.via
            userAgent = other.userAgent
            audience = other.audience
        }
        receipt = JudgedReceipt.latest(kept: receipt, arriving: other.receipt)
    }
}

// MARK: Rows of a database

extension ScreenRecord {
    /// The `screens` table's columns in the order `init?(row:)` reads them: what SQL
    /// stores share.
    public static let columns =
        "carousel, id, last_seen, heard_since, via, user_agent, banner, version, shown_at, lateness, out_of_step, "
        + "verdict_since, offset_ms, rtt_ms, audience, claim"

    /// A row read by column number (`columns`' order); nil for a row no process of this build
    /// wrote (an id or a name it does not know), which is skipped rather than shown wrong.
    public init?(row: some SQLRow) {
        guard let carousel = row.integer(0), let id = row.text(1).flatMap(ScreenID.init), let lastSeen = row.integer(2),
            let heardSince = row.integer(3), let via = row.text(4).flatMap(ScreenVia.init(rawValue:))
        else { return nil }
        var receipt: JudgedReceipt?
        if let banner = row.text(6), let version = row.integer(7), let shownAt = row.integer(8),
            let verdictSince = row.integer(11)
        {
            receipt = JudgedReceipt(
                banner: banner, version: UInt64(clamping: version), shownAt: Timestamp(nanosecondsSinceEpoch: shownAt),
                lateness: row.integer(9).map { .nanoseconds($0) },
                outOfStep: row.text(10).flatMap(OutOfStepReason.init),
                verdictSince: Timestamp(nanosecondsSinceEpoch: verdictSince), offsetMs: row.integer(12),
                rttMs: row.integer(13))
        }
        self.init(
            carousel: carousel, id: id, lastSeen: Timestamp(nanosecondsSinceEpoch: lastSeen),
            heardSince: Timestamp(nanosecondsSinceEpoch: heardSince), via: via, userAgent: row.text(5) ?? "",
            audience: row.text(14), receipt: receipt, claim: row.text(15).map(ScreenKey.init(digest:)))
    }
}

/// The fleet's screens (docs/SCREENS.md).
public protocol ScreenStore: AnyObject, Sendable {
    /// The fleet (docs/SCREENS.md): merges each sighting into its screen's row by
    /// `ScreenSighting.merged(into:timeout:)`, in one transaction that survives the process being
    /// killed. A sighting of a carousel no longer stored is dropped.
    func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError)

    /// Writes `rows` whole, in one transaction, for the fleet of the one process that writes this
    /// store (`CarouselStore.isShared` false), which keeps the rows merged by the rule above and
    /// needs no merge here (docs/SCREENS.md, "One process, no read-back"). A row of a carousel no
    /// longer stored is dropped.
    func keepScreens(_ rows: [ScreenRecord]) throws(StoreError)

    /// Every screen's row, of every carousel stored.
    func screens() throws(StoreError) -> [ScreenRecord]

    /// Forgets the screens not heard from since `cutoff`; returns how many.
    func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int

    /// Forgets these screens, their claims with them (ones that made room for new screens, or one an
    /// operator forgot, `audit` saying so in the same transaction).
    func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError)
}
