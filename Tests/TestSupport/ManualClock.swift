import Carousel
import Synchronization

/// A clock the test sets by hand, for exact times without sleeping.
public final class ManualClock: Sendable {
    private let time: Mutex<Timestamp>

    public init(_ start: Timestamp) { time = Mutex(start) }

    public func set(_ timestamp: Timestamp) { time.withLock { $0 = timestamp } }

    public var read: @Sendable () -> Timestamp { { [self] in time.withLock { $0 } } }
}
