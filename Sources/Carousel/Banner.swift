import TimeZones

/// One slide of the carousel. Field formats (id pattern, absolute http(s) URLs) are checked where
/// banners enter the service; here they are plain values.
public struct Banner: Sendable, Hashable {
    public var id: String
    public var image: String
    public var caption: String
    public var link: String?
    /// How long this banner stays current; nil means the carousel's interval.
    public var duration: Duration?
    /// When it may rotate; `.always` unless scheduled.
    public var schedule: Schedule
    /// How many turns it gets in each cycle of the rotation (docs/WEIGHTS.md); 1 to `weights`.
    public var weight: Int
    /// The audiences whose screens show it (docs/AUDIENCES.md); empty: every audience, and
    /// screens that declare none.
    public var audiences: [String]

    /// The weights a banner may have.
    public static let weights: ClosedRange<Int> = 1...100

    public init(
        id: String, image: String, caption: String = "", link: String? = nil, duration: Duration? = nil,
        schedule: Schedule = .always, weight: Int = 1, audiences: [String] = []
    ) {
        self.id = id
        self.image = image
        self.caption = caption
        self.link = link
        self.duration = duration
        self.schedule = schedule
        self.weight = weight
        self.audiences = audiences
    }

    /// Whether screens of `audience` (nil: screens that declare none) show it.
    public func isFor(_ audience: String?) -> Bool {
        audiences.isEmpty || audience.map(audiences.contains) == true
    }
}

/// What a carousel plays, as its definition says: the banners in order, the interval of those
/// without a `duration`, the time zone their windows are read in, and the banner shown when none
/// is eligible.
public struct Lineup: Sendable, Hashable {
    public var banners: [Banner]
    public var interval: Duration
    public var timeZone: ZoneRules
    /// The id of the banner shown while no banner is eligible; nil: the "no banners" state then.
    public var fallback: String?

    /// Every audience the banners name, sorted (docs/AUDIENCES.md).
    public var audiences: [String] { Audiences.named(by: banners) }

    public init(banners: [Banner], interval: Duration, timeZone: ZoneRules = .utc, fallback: String? = nil) {
        self.banners = banners
        self.interval = interval
        self.timeZone = timeZone
        self.fallback = fallback
    }
}

/// What an audience may be called (docs/AUDIENCES.md): written as screen ids are, so that a
/// screen may be named after its audience.
public enum Audiences {
    /// The most audiences the banners of one carousel may name.
    public static let maximumPerCarousel = 64
    /// What an invalid name is told.
    public static let rule = "an audience is 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"

    public static func isValidName(_ name: String) -> Bool {
        ScreenID(name) != nil
    }

    /// Every audience `banners` name, each once, sorted.
    public static func named(by banners: [Banner]) -> [String] {
        banners.contains { !$0.audiences.isEmpty } ? Set(banners.flatMap(\.audiences)).sorted() : []
    }
}
