import Carousel
import Definitions
import JSON
import TimeZones

/// An anchor as a store keeps it, in the columns `names` (integers are nanoseconds since the epoch;
/// nil is NULL; the takeover is JSON text): the one mapping, both ways, that every store's rows and
/// PostgreSQL's notifications use (docs/STORE.md, what is stored).
public struct AnchorColumns: Sendable, Equatable {
    /// The columns, in the order of `values`.
    public static let names = [
        "position", "playing_since", "paused_until", "version", "changed_at", "takeover", "turn", "audiences",
    ]

    public let position: Int64?
    public let playingSince: Int64?
    public let pausedUntil: Int64?
    public let version: Int64
    public let changedAt: Int64
    /// `{"banner": {…}, "until": ns|null, "frozenAt": ns}`, or nil without a takeover.
    public let takeover: String?
    /// The turn in a weighted cycle (docs/WEIGHTS.md); NULL in rows written before weights.
    public let turn: Int64?
    /// Each audience's anchor (docs/AUDIENCES.md), `{"de": {"position", "playingSince",
    /// "pausedUntil", "version", "changedAt", "turn"}, …}` with the columns' values (null for
    /// NULL); nil without audiences.
    public let audiences: String?

    /// A column's value, as a statement binds it.
    public enum Value: Sendable, Equatable {
        case integer(Int64?)
        case text(String?)
    }

    public init(_ anchor: CarouselAnchor) {
        position = anchor.index.map { Int64($0) }
        switch anchor.playback {
        case .playing(let since):
            playingSince = since.nanosecondsSinceEpoch
            pausedUntil = nil
        case .paused(let until):
            playingSince = nil
            pausedUntil = until?.nanosecondsSinceEpoch
        }
        version = Int64(bitPattern: anchor.version)
        changedAt = anchor.changedAt.nanosecondsSinceEpoch
        takeover = anchor.takeover.map(Self.text)
        turn = anchor.turn.map { Int64($0) }
        audiences = anchor.audiences.isEmpty ? nil : Self.text(anchor.audiences)
    }

    public init(
        position: Int64?, playingSince: Int64?, pausedUntil: Int64?, version: Int64, changedAt: Int64,
        takeover: String?, turn: Int64?, audiences: String?
    ) {
        self.turn = turn
        self.audiences = audiences
        self.position = position
        self.playingSince = playingSince
        self.pausedUntil = pausedUntil
        self.version = version
        self.changedAt = changedAt
        self.takeover = takeover
    }

    /// The anchor these columns hold: playing when `playing_since` is set, else paused. A takeover
    /// that cannot be read (never written so) is left out rather than stop the carousel.
    public var anchor: CarouselAnchor {
        let playback: Carousel.Playback =
            if let playingSince { .playing(since: Timestamp(nanosecondsSinceEpoch: playingSince)) } else {
                .paused(until: pausedUntil.map(Timestamp.init(nanosecondsSinceEpoch:)))
            }
        return CarouselAnchor(
            index: position.map { Int($0) }, playback: playback, version: UInt64(bitPattern: version),
            takeover: takeover.flatMap(Self.takeover), changedAt: Timestamp(nanosecondsSinceEpoch: changedAt),
            turn: turn.flatMap { Int(exactly: $0) }, audiences: audiences.map(Self.audiences) ?? [:])
    }

    /// The columns in the order of `names`, for a statement's parameters.
    public var values: [Value] {
        [
            .integer(position), .integer(playingSince), .integer(pausedUntil), .integer(version), .integer(changedAt),
            .text(takeover), .integer(turn), .text(audiences),
        ]
    }

    /// The audiences' anchors as JSON, sorted by name so that equal anchors write equal text (a
    /// conditional write compares it).
    private static func text(_ audiences: [String: CarouselAnchor]) -> String {
        var object = JSONObject()
        for name in audiences.keys.sorted() {
            let columns = AnchorColumns(audiences[name]!)
            var own = JSONObject()
            own.add("position", columns.position)
            own.add("playingSince", columns.playingSince)
            own.add("pausedUntil", columns.pausedUntil)
            own.add("version", columns.version)
            own.add("changedAt", columns.changedAt)
            own.add("turn", columns.turn)
            object.add(name, own)
        }
        return String(decoding: object.bytes, as: UTF8.self)
    }

    /// The audiences' anchors of `text`; one that cannot be read is left out (the audience then
    /// starts from the carousel's anchor) rather than stop the carousel.
    private static func audiences(_ text: String) -> [String: CarouselAnchor] {
        guard let value = try? JSONParser.parse(Array(text.utf8)), case .object(let members) = value else { return [:] }
        var anchors: [String: CarouselAnchor] = [:]
        for (name, member) in members {
            guard let fields = try? JSONFields(member) else { continue }
            func integer(_ key: String) -> Int64? {
                (try? fields.optional(key, JSONKind<JSONNumber>.integer.orNull))??.flatMap { Int64($0.literal) }
            }
            guard let version = integer("version"), let changedAt = integer("changedAt") else { continue }
            anchors[name] =
                AnchorColumns(
                    position: integer("position"), playingSince: integer("playingSince"),
                    pausedUntil: integer("pausedUntil"), version: version, changedAt: changedAt, takeover: nil,
                    turn: integer("turn"), audiences: nil
                ).anchor
        }
        return anchors
    }

    private static func text(_ takeover: Carousel.Takeover) -> String {
        var object = JSONObject()
        object.add("banner", BannerDecoding.json(takeover.banner))
        object.add("until", takeover.until?.nanosecondsSinceEpoch)
        object.add("frozenAt", takeover.frozenAt.nanosecondsSinceEpoch)
        return String(decoding: object.bytes, as: UTF8.self)
    }

    private static func takeover(_ text: String) -> Carousel.Takeover? {
        guard let value = try? JSONParser.parse(Array(text.utf8)), let fields = try? JSONFields(value),
            let bannerValue = fields["banner"], let banner = try? BannerDecoding.banner(JSONFields(bannerValue)),
            let frozenAt = (try? fields.required("frozenAt", .integer)).flatMap({ Int64($0.literal) })
        else { return nil }
        let until = (try? fields.optional("until", JSONKind<JSONNumber>.integer.orNull))??.flatMap { Int64($0.literal) }
        return Carousel.Takeover(
            banner: banner, until: until.map(Timestamp.init(nanosecondsSinceEpoch:)),
            frozenAt: Timestamp(nanosecondsSinceEpoch: frozenAt))
    }
}
