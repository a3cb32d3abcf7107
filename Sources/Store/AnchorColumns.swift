import Carousel

/// An anchor as a store keeps it, in the columns `position, playing_since, paused_until, version`
/// (integers, nanoseconds since the epoch; nil is NULL): the one mapping, both ways, that every
/// store's rows and PostgreSQL's notifications use (docs/STORE.md, what is stored).
public struct AnchorColumns: Sendable, Equatable {
    public let position: Int64?
    public let playingSince: Int64?
    public let pausedUntil: Int64?
    public let version: Int64

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
    }

    public init(position: Int64?, playingSince: Int64?, pausedUntil: Int64?, version: Int64) {
        self.position = position
        self.playingSince = playingSince
        self.pausedUntil = pausedUntil
        self.version = version
    }

    /// The anchor these columns hold: playing when `playing_since` is set, else paused.
    public var anchor: CarouselAnchor {
        let playback: Carousel.Playback =
            if let playingSince { .playing(since: Timestamp(nanosecondsSinceEpoch: playingSince)) } else {
                .paused(until: pausedUntil.map(Timestamp.init(nanosecondsSinceEpoch:)))
            }
        return CarouselAnchor(index: position.map { Int($0) }, playback: playback, version: UInt64(bitPattern: version))
    }

    /// The four columns in order, for a statement's parameters.
    public var values: [Int64?] { [position, playingSince, pausedUntil, version] }
}
