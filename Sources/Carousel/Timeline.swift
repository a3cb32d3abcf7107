import TimeZones

/// One planned change of what screens show: from `at` on, `banner` (nil: nothing) at `index` of
/// `count` rotating banners; `change` names the scheduled change of the definition made then, if
/// one is (docs/SCHEDULED.md).
public struct TimelineEntry: Sendable, Hashable {
    public let at: Timestamp
    public let banner: Banner?
    public let index: Int?
    public let count: Int
    public var change: Int64? = nil
}

/// A change of the definition planned at `at` (a scheduled change, docs/SCHEDULED.md): `apply`
/// does to the state then what making it will do.
public struct PlannedRedefinition {
    public let at: Timestamp
    public let change: Int64
    public let apply: (inout Carousel, Timestamp) -> Void

    public init(at: Timestamp, change: Int64, apply: @escaping (inout Carousel, Timestamp) -> Void) {
        self.at = at
        self.change = change
        self.apply = apply
    }
}

extension Carousel {
    /// How far ahead `plan` and `projected` look: two years.
    public static let planHorizon = Duration.seconds(2 * 31_536_000)

    /// The state at `time` (from `now` on) if no command intervenes, with `redefinitions` (soonest
    /// first) made on the way: what screens will show then (docs/AUDIENCES.md, the preview).
    /// Whole laps are skipped at once, so a far `time` costs about a step per schedule boundary.
    public func projected(from now: Timestamp, to time: Timestamp, redefinitions: [PlannedRedefinition] = [])
        -> Carousel
    {
        var future = self
        future.advance(to: now)
        for redefinition in redefinitions where redefinition.at > now && redefinition.at <= time {
            future.advance(to: redefinition.at)
            redefinition.apply(&future, redefinition.at)
        }
        future.advance(to: time)
        return future
    }

    /// The most entries a timeline gives.
    public static let timelineLimit = 10_000

    /// The changes planned after `now` if no command intervenes: the same steps `advance(to:)`
    /// takes, recorded where the shown banner, its index or the count change, until just before
    /// `end` (nil: as far as they go), at most `limit` of them. Ends early when nothing more is
    /// planned (paused, one banner, an open-ended takeover), two years ahead, or after
    /// `2 × limit + 1000` steps. `until`: every change before it is listed. That is `end` when nothing
    /// cut them short (nothing more planned is complete too), else the last step looked at.
    /// `redefinitions` (soonest first) are made on the way, each an entry of its own even when
    /// the banner shown stays (its caption may be what changed).
    ///
    /// For the screens of `audience` (docs/AUDIENCES.md): its state's changes. Only that state is
    /// followed, unless a redefinition may name or drop audiences on the way.
    public func plan(
        from now: Timestamp, limit: Int, before end: Timestamp?, redefinitions: [PlannedRedefinition] = [],
        audience: String? = nil
    ) -> (entries: [TimelineEntry], until: Timestamp) {
        var future = redefinitions.isEmpty ? state(for: audience) : self
        future.advance(to: now)
        var entries: [TimelineEntry] = []
        let first = future.state(for: audience)
        var shown = (first.currentBanner?.id, first.index, first.count)
        let twoYears = now + Self.planHorizon
        let horizon = end.map { min($0, twoYears) } ?? twoYears
        var redefinitions = redefinitions.drop { $0.at <= now }
        // Steps that change nothing on screen (a window ending where another begins) are few; the
        // bound keeps a request's work in proportion to what it asks for, whatever the schedules.
        var steps = 0
        var lookedAt = now
        while true {
            let advance = future.nextChangeAt
            var redefinition: PlannedRedefinition? = nil
            if let next = redefinitions.first, advance.map({ next.at <= $0 }) ?? true { redefinition = next }
            guard let due = redefinition?.at ?? advance, due < horizon else { break }
            guard entries.count < limit, steps < 2 * limit + 1000 else { return (entries, lookedAt) }
            steps += 1
            future.advance(to: due)
            lookedAt = due
            if let redefinition {
                redefinitions.removeFirst()
                redefinition.apply(&future, due)
                // An edit keeps the current banner's countdown, which may have run out already (a
                // banner alone joined by another): the engine then catches up at once, as here.
                future.advance(to: due)
            }
            let state = future.state(for: audience)
            let now = (state.currentBanner?.id, state.index, state.count)
            guard now != shown || redefinition != nil else { continue }
            shown = now
            entries.append(
                TimelineEntry(
                    at: due, banner: state.currentBanner, index: state.index, count: state.count,
                    change: redefinition?.change))
        }
        return (entries, max(horizon, now))
    }
}
