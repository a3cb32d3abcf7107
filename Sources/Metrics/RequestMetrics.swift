import Glibc
import Threading

/// Requests as `GET /metrics` reports them (docs/METRICS.md): how many, by route template, method
/// and status, and how long the handler took to have each answer ready, by route (a histogram).
///
/// Every answer given on the calling thread (libmicrohttpd's workers, the acceptor) is counted in
/// that thread's own counters (`PerThreadCounters`): the read path writes no cache line another
/// core writes too. Deferred answers finish on threads that come and go, and are slow anyway (a
/// store write): they are counted under a lock.
public final class RequestMetrics: Sendable {
    /// Route labels: the router's templates, then `other` for a path that matches none.
    let routes: [String]
    static let methods = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"]
    /// The statuses the service answers with; anything else is counted as `other`.
    static let statuses = [
        200, 201, 202, 204, 302, 304, 400, 401, 403, 404, 405, 406, 409, 412, 413, 415, 422, 428, 431, 500, 503,
    ]
    /// Upper bounds of the duration buckets, in seconds (`+Inf` follows).
    static let bucketBounds: [Double] = [
        0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    private static let statusIndex: [Int8] = {
        var index = [Int8](repeating: Int8(statuses.count), count: 600)
        for (position, status) in statuses.enumerated() { index[status] = Int8(position) }
        return index
    }()
    private static let bucketNanoseconds = bucketBounds.map { UInt64($0 * 1e9) }

    // The counters' layout, one flat array: requests[route][method][status], then per route the
    // duration buckets (+Inf last, not cumulative) and the sum of durations in nanoseconds.
    private static let statusCount = statuses.count + 1
    private static let perRouteDurations = bucketBounds.count + 2
    private let requestCount: Int
    private let counterCount: Int

    private let local: PerThreadCounters
    private let deferred: Lock<[UInt64]>

    /// - Parameter routeTemplates: the router's route templates, in the order of their indexes
    ///   (`count(route:…)` takes an index, nil for a path that matched none).
    public init(routeTemplates: [String]) {
        routes = routeTemplates + ["other"]
        requestCount = routes.count * Self.methods.count * Self.statusCount
        counterCount = requestCount + routes.count * Self.perRouteDurations
        local = PerThreadCounters(count: counterCount)
        deferred = Lock([UInt64](repeating: 0, count: counterCount))
    }

    /// Counts an answer given on the calling thread; `route` is its template's index (nil: `other`).
    public func count(route: Int?, method: String, status: Int, nanoseconds: UInt64) {
        let at = counters(route: route, method: method, status: status, nanoseconds: nanoseconds)
        local.withSlot { slot in
            slot.add(1, at: at.request)
            slot.add(1, at: at.bucket)
            slot.add(nanoseconds, at: at.sum)
        }
    }

    /// Counts a deferred answer, on whatever thread it finished.
    public func countDeferred(route: Int?, method: String, status: Int, nanoseconds: UInt64) {
        let at = counters(route: route, method: method, status: status, nanoseconds: nanoseconds)
        deferred.withLock { counters in
            counters[at.request] &+= 1
            counters[at.bucket] &+= 1
            counters[at.sum] &+= nanoseconds
        }
    }

    /// Where one answer is counted: its request counter, its duration bucket, its route's sum.
    private func counters(route template: Int?, method: String, status: Int, nanoseconds: UInt64) -> (
        request: Int, bucket: Int, sum: Int
    ) {
        let methodIndex = Self.methods.firstIndex(of: method) ?? Self.methods.count - 1
        let statusIndex = status >= 0 && status < 600 ? Int(Self.statusIndex[status]) : Self.statuses.count
        let route = template ?? routes.count - 1
        let durations = requestCount + route * Self.perRouteDurations
        return (
            request: (route * Self.methods.count + methodIndex) * Self.statusCount + statusIndex,
            bucket: durations + (Self.bucketNanoseconds.firstIndex { nanoseconds <= $0 } ?? Self.bucketBounds.count),
            sum: durations + Self.bucketBounds.count + 1
        )
    }

    /// Writes the two families in Prometheus' text format, the requests that were answered only.
    public func write(to text: inout String) {
        var totals = local.sum()
        deferred.withLock { counters in
            for index in 0..<counterCount { totals[index] &+= counters[index] }
        }
        text += "# HELP banner_http_requests_total Requests answered, by route template, method and status.\n"
        text += "# TYPE banner_http_requests_total counter\n"
        for route in routes.indices {
            for method in Self.methods.indices {
                for status in 0..<Self.statusCount {
                    let value = totals[(route * Self.methods.count + method) * Self.statusCount + status]
                    guard value > 0 else { continue }
                    let statusLabel = status < Self.statuses.count ? String(Self.statuses[status]) : "other"
                    text +=
                        "banner_http_requests_total{route=\"\(routes[route])\",method=\"\(Self.methods[method])\""
                    text += ",status=\"\(statusLabel)\"} \(value)\n"
                }
            }
        }
        text += "# HELP banner_http_request_duration_seconds Time from a request reaching the handler to its "
        text += "answer being ready (sending not included), by route template.\n"
        text += "# TYPE banner_http_request_duration_seconds histogram\n"
        for route in routes.indices {
            let base = requestCount + route * Self.perRouteDurations
            let count = (0...Self.bucketBounds.count).reduce(UInt64(0)) { $0 &+ totals[base + $1] }
            guard count > 0 else { continue }
            let label = "route=\"\(routes[route])\""
            var cumulative: UInt64 = 0
            for (bucket, bound) in Self.bucketBounds.enumerated() {
                cumulative &+= totals[base + bucket]
                text += "banner_http_request_duration_seconds_bucket{\(label),le=\"\(bound)\"} \(cumulative)\n"
            }
            text += "banner_http_request_duration_seconds_bucket{\(label),le=\"+Inf\"} \(count)\n"
            let seconds = Double(totals[base + Self.bucketBounds.count + 1]) / 1e9
            text += "banner_http_request_duration_seconds_sum{\(label)} \(seconds)\n"
            text += "banner_http_request_duration_seconds_count{\(label)} \(count)\n"
        }
    }
}

/// CLOCK_MONOTONIC in nanoseconds, for timing requests: a vDSO read and an integer, where
/// `ContinuousClock`'s instants cost the read path Int128 arithmetic (docs/PERFORMANCE.md).
@inlinable
public func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}
