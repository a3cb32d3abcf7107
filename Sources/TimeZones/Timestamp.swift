import Glibc

/// A point in wall-clock time, in nanoseconds since 1970-01-01T00:00:00Z. Integer nanoseconds
/// keep `anchor + k × interval` exact: schedules computed from it never drift.
public struct Timestamp: Hashable, Comparable, Sendable, CustomStringConvertible {
    public var nanosecondsSinceEpoch: Int64

    public init(nanosecondsSinceEpoch: Int64) {
        self.nanosecondsSinceEpoch = nanosecondsSinceEpoch
    }

    /// `Timestamp(secondsSinceEpoch: 1_000)`; handy for exact times in tests.
    public init(secondsSinceEpoch seconds: Int64) {
        nanosecondsSinceEpoch = seconds * 1_000_000_000
    }

    /// Before and after every instant a clock reads: "at once" and "never" where an instant is due.
    public static let distantPast = Timestamp(nanosecondsSinceEpoch: .min)
    public static let distantFuture = Timestamp(nanosecondsSinceEpoch: .max)

    /// The system's real-time clock (CLOCK_REALTIME), the clock RFC 3339 times are read on.
    @Sendable public static func now() -> Timestamp {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Timestamp(nanosecondsSinceEpoch: Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        lhs.nanosecondsSinceEpoch < rhs.nanosecondsSinceEpoch
    }

    public static func + (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch + rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: Duration) -> Timestamp {
        Timestamp(nanosecondsSinceEpoch: lhs.nanosecondsSinceEpoch - rhs.nanoseconds)
    }

    public static func - (lhs: Timestamp, rhs: Timestamp) -> Duration {
        .nanoseconds(lhs.nanosecondsSinceEpoch - rhs.nanosecondsSinceEpoch)
    }

    public var description: String {
        "Timestamp(\(nanosecondsSinceEpoch)ns)"
    }
}

extension Duration {
    /// The duration in whole nanoseconds (sub-nanosecond parts are dropped).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in seconds, as the API writes it (`4.0`, `0.25`).
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
