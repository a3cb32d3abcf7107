import Threading
import TimeZones

/// What `GET /metrics` reports beside requests (docs/METRICS.md): carousel changes by cause, how
/// late the timers fired, plays, views and clicks, and the store's operations. None of it is on
/// the read path, so one lock counts it all.
public final class ServiceMetrics: Sendable {
    public enum ChangeCause: String, CaseIterable, Sendable {
        case advance, schedule, command, admin
    }

    /// The store's operations, as labels.
    public enum StoreOperation: String, CaseIterable, Sendable {
        case load, create, command, admin, delete, record, stats, screens, media, deliveries
    }

    private let counts = Lock(Counts())
    /// Whether the store can be reached now, asked at each scrape.
    private let storeUp: @Sendable () -> Bool

    public init(storeUp: @escaping @Sendable () -> Bool = { true }) {
        self.storeUp = storeUp
    }

    private struct Counts {
        var changes: [ChangeCause: UInt64] = [:]
        var lateness = Histogram(bounds: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5])
        var plays: UInt64 = 0
        var views: UInt64 = 0
        var clicks: UInt64 = 0
        var store: [StoreOperation: Histogram] = [:]
    }

    /// Store operations take from a millisecond (a command in the WAL) to seconds (a lock waited for).
    private static let storeBounds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    public func changed(_ cause: ChangeCause, count: Int = 1) {
        counts.withLock { $0.changes[cause, default: 0] += UInt64(count) }
    }

    /// A timer fired `lateness` after the change it was armed for was due.
    public func timerFired(late lateness: Duration) {
        counts.withLock { $0.lateness.observe(lateness.seconds) }
    }

    public func played(_ count: Int = 1) { counts.withLock { $0.plays += UInt64(count) } }
    public func viewed(_ count: Int) { counts.withLock { $0.views += UInt64(count) } }
    public func clicked() { counts.withLock { $0.clicks += 1 } }

    /// Times `operation` on the store: how long it took, whether it succeeded or not.
    public func timing<Result, Failure: Error>(_ operation: StoreOperation, _ body: () throws(Failure) -> Result)
        throws(Failure) -> Result
    {
        let started = ContinuousClock.now
        defer {
            let elapsed = (ContinuousClock.now - started).seconds
            counts.withLock { $0.store[operation, default: Histogram(bounds: Self.storeBounds)].observe(elapsed) }
        }
        return try body()
    }

    /// The families in Prometheus' text format.
    public func write(to text: inout String) {
        let counts = counts.withLock { $0 }
        text += "# HELP banner_carousel_changes_total Carousel state changes made by this process, by cause: "
        text += "advance and schedule (the carousel's timer), command and admin (requests).\n"
        text += "# TYPE banner_carousel_changes_total counter\n"
        for cause in ChangeCause.allCases {
            text += "banner_carousel_changes_total{cause=\"\(cause.rawValue)\"} \(counts.changes[cause] ?? 0)\n"
        }
        text += "# HELP banner_advance_lateness_seconds How long after a change was due its timer fired.\n"
        text += "# TYPE banner_advance_lateness_seconds histogram\n"
        counts.lateness.write("banner_advance_lateness_seconds", labels: "", to: &text)
        for (name, help, value) in [
            ("banner_plays_total", "Plays this process saw begin (each replica sees every play).", counts.plays),
            ("banner_views_total", "Views screens reported to this process.", counts.views),
            ("banner_clicks_total", "Clicks on banners' links through this process.", counts.clicks),
        ] {
            text += "# HELP \(name) \(help)\n# TYPE \(name) counter\n\(name) \(value)\n"
        }
        text += "# HELP banner_store_operation_duration_seconds How long store operations took, failed ones "
        text += "included, by operation.\n"
        text += "# TYPE banner_store_operation_duration_seconds histogram\n"
        for operation in StoreOperation.allCases {
            guard let histogram = counts.store[operation] else { continue }
            histogram.write(
                "banner_store_operation_duration_seconds", labels: "operation=\"\(operation.rawValue)\",", to: &text)
        }
        text += "# HELP banner_store_up 1 while the store can be reached, 0 while it cannot.\n"
        text += "# TYPE banner_store_up gauge\nbanner_store_up \(storeUp() ? 1 : 0)\n"
    }
}
