import TimeZones

/// One planned change of what screens show: from `at` on, `banner` (nil: nothing) at `index` of
/// `count` rotating banners.
public struct TimelineEntry: Sendable, Hashable {
    public let at: Timestamp
    public let banner: Banner?
    public let index: Int?
    public let count: Int
}

extension Carousel {
    /// The most entries a timeline gives.
    public static let timelineLimit = 10_000

    /// The changes planned after `now` if no command intervenes: the same steps `advance(to:)`
    /// takes, recorded where the shown banner, its index or the count change, at most `limit` of
    /// them. Ends early when nothing more is planned (paused, one banner, an open-ended takeover),
    /// two years ahead, or after `2 × limit + 1000` steps.
    public func timeline(from now: Timestamp, limit: Int) -> [TimelineEntry] {
        var future = self
        future.advance(to: now)
        var entries: [TimelineEntry] = []
        var shown = (future.currentBanner?.id, future.index, future.count)
        let horizon = now + .seconds(2 * 31_536_000)
        // Steps that change nothing on screen (a window ending where another begins) are few; the
        // bound keeps a request's work in proportion to what it asks for, whatever the schedules.
        var steps = 0
        while entries.count < limit, steps < 2 * limit + 1000, let due = future.nextChangeAt, due < horizon {
            steps += 1
            future.advance(to: due)
            let now = (future.currentBanner?.id, future.index, future.count)
            guard now != shown else { continue }
            shown = now
            entries.append(
                TimelineEntry(at: due, banner: future.currentBanner, index: future.index, count: future.count))
        }
        return entries
    }
}
