import Carousel
import Threading
import TimeZones

/// A clock the test sets by hand, for exact times without sleeping.
public final class ManualClock: Sendable {
    private let time: Lock<Timestamp>

    public init(_ start: Timestamp) { time = Lock(start) }

    public func set(_ timestamp: Timestamp) { time.withLock { $0 = timestamp } }

    public var read: @Sendable () -> Timestamp { { [self] in time.withLock { $0 } } }
}
