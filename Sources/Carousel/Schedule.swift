import TimeZones

/// When a banner may rotate (docs/SCHEDULES.md): switched on, between `startsAt` (inclusive) and
/// `endsAt` (exclusive), and inside one of its weekly `windows` (in the carousel's time zone) when
/// it has any. A banner without any of these always rotates.
public struct Schedule: Sendable, Hashable {
    public var enabled: Bool
    public var startsAt: Timestamp?
    public var endsAt: Timestamp?
    public var windows: [Window]

    public init(enabled: Bool = true, startsAt: Timestamp? = nil, endsAt: Timestamp? = nil, windows: [Window] = []) {
        self.enabled = enabled
        self.startsAt = startsAt
        self.endsAt = endsAt
        self.windows = windows
    }

    public static let always = Schedule()

    /// Whether the banner may rotate at `time`, and the first time after it at which that may
    /// change (nil: never again). The time may be one at which nothing changes after all (one window
    /// ending where the next begins): callers compare, they do not assume.
    public func status(at time: Timestamp, in zone: ZoneRules) -> (eligible: Bool, changesAt: Timestamp?) {
        guard enabled else { return (false, nil) }
        if let startsAt, time < startsAt { return (false, startsAt) }
        if let endsAt, time >= endsAt { return (false, nil) }
        guard !windows.isEmpty else { return (true, endsAt) }
        // Window edges fall on whole seconds (minutes of local time, offsets in seconds).
        let second = floorDivide(time.nanosecondsSinceEpoch, 1_000_000_000)
        let today = floorDivide(zone.localSeconds(at: second), 86_400)
        var eligible = false
        var next: Int64?
        // Yesterday's window may run past midnight; a window on one weekday recurs within 7 days.
        // One more day each side covers clocks set back across midnight. Days whose windows all
        // open after the change already found are not looked at: a window of local day `day`
        // opens at `day` midnight local or later, at most 17 hours earlier in UTC.
        for day in (today - 2)...(today + 8) {
            if day > today + 1, let next, day * 86_400 - 17 * 3600 > next { break }
            let weekday = CivilDate(daysSinceEpoch: day).weekday
            for window in windows where window.days.contains(weekday: weekday) {
                let (start, end) = window.occurrence(on: day, in: zone)
                guard start < end else { continue }  // swallowed by a clock change
                if start <= second && second < end { eligible = true }
                if start > second { next = min(next ?? start, start) }
                if end > second { next = min(next ?? end, end) }
            }
        }
        let windowChange = next.map { Timestamp(nanosecondsSinceEpoch: $0 * 1_000_000_000) }
        return (eligible, earliest(windowChange, endsAt))
    }
}

/// A weekly time window: on `days`, from `from` until `to`, local time. `to` ≤ `from` runs past
/// midnight and belongs to the day it starts.
public struct Window: Sendable, Hashable {
    public var days: Weekdays
    public var from: TimeOfDay
    public var to: TimeOfDay

    public init(days: Weekdays = .every, from: TimeOfDay, to: TimeOfDay) {
        self.days = days
        self.from = from
        self.to = to
    }

    /// The instants (UTC seconds) the window opens and closes when it starts on local day `day`.
    /// A wall-clock time that does not exist that day counts from the end of the gap; one that
    /// happens twice counts from its first occurrence (`ZoneRules.instant(ofLocal:)`).
    func occurrence(on day: Int64, in zone: ZoneRules) -> (start: Int64, end: Int64) {
        let endDay = to.minutes > from.minutes ? day : day + 1
        return (
            zone.instant(ofLocal: day * 86_400 + Int64(from.minutes) * 60),
            zone.instant(ofLocal: endDay * 86_400 + Int64(to.minutes) * 60)
        )
    }
}

/// A wall-clock time, `HH:MM`, as minutes after midnight: 0…1439, or 1440 (`24:00`) for a
/// window that ends at midnight.
public struct TimeOfDay: Sendable, Hashable, CustomStringConvertible {
    public let minutes: Int

    public init?(minutes: Int) {
        guard (0...1440).contains(minutes) else { return nil }
        self.minutes = minutes
    }

    /// `"09:30"`; `"24:00"` only when `allowingEndOfDay`.
    public init?(_ text: String, allowingEndOfDay: Bool = false) {
        let bytes = Array(text.utf8)
        let digit = { (byte: UInt8) -> Int? in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) ? Int(byte - UInt8(ascii: "0")) : nil
        }
        guard bytes.count == 5, bytes[2] == UInt8(ascii: ":"), let h1 = digit(bytes[0]), let h2 = digit(bytes[1]),
            let m1 = digit(bytes[3]), let m2 = digit(bytes[4])
        else { return nil }
        let hour = h1 * 10 + h2
        let minute = m1 * 10 + m2
        guard minute < 60, hour < 24 || (allowingEndOfDay && hour == 24 && minute == 0) else { return nil }
        minutes = hour * 60 + minute
    }

    public var description: String {
        let hour = minutes / 60
        let minute = minutes % 60
        return (hour < 10 ? "0" : "") + "\(hour):" + (minute < 10 ? "0" : "") + "\(minute)"
    }
}

/// A set of weekdays, Monday to Sunday.
public struct Weekdays: Sendable, Hashable {
    /// Bit 0 Monday … bit 6 Sunday.
    public private(set) var bits: UInt8

    /// Day names as definitions write them, Monday first.
    public static let names = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    public static let every = Weekdays(bits: 0x7F)

    public init(bits: UInt8) { self.bits = bits & 0x7F }

    /// 0 Monday … 6 Sunday.
    public func contains(weekday: Int) -> Bool { bits & (1 << weekday) != 0 }

    public mutating func insert(weekday: Int) { bits |= 1 << weekday }

    /// The days' names, Monday first.
    public var names: [String] { (0..<7).filter(contains(weekday:)).map { Self.names[$0] } }
}
