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

    /// The weights a banner may have.
    public static let weights: ClosedRange<Int> = 1...100

    public init(
        id: String, image: String, caption: String = "", link: String? = nil, duration: Duration? = nil,
        schedule: Schedule = .always, weight: Int = 1
    ) {
        self.id = id
        self.image = image
        self.caption = caption
        self.link = link
        self.duration = duration
        self.schedule = schedule
        self.weight = weight
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

    public init(banners: [Banner], interval: Duration, timeZone: ZoneRules = .utc, fallback: String? = nil) {
        self.banners = banners
        self.interval = interval
        self.timeZone = timeZone
        self.fallback = fallback
    }
}
