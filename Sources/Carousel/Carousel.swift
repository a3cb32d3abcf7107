/// The carousel as a pure value: which banner is current, whether it is playing, and when it
/// next changes by itself. Every transition takes `now`; nothing here reads a clock or does I/O.
///
/// Rules (docs/API.md, the carousel): the list wraps around both ways; while playing, the current banner
/// advances when its interval (its own `duration`, else `interval`) has elapsed since the
/// countdown started, and each next countdown starts at the previous due time, not at "now", so
/// late processing never accumulates drift; a manual move restarts the countdown; a pause stops
/// auto-advance (optionally until a given time) and a resume restarts the countdown; with fewer
/// than two banners nothing advances. `version` grows by one with every observable change, and by
/// one for every automatic advance (each counted, even those a stalled process catches up on at
/// once), so that the state and `version` at a time are a pure function of the banners, the
/// interval, an `anchor` and that time (docs/STORE.md).
public struct Carousel: Sendable, Hashable {
    /// Whether the carousel advances by itself.
    public enum Playback: Sendable, Hashable {
        /// Advancing; the current countdown started at `since`.
        case playing(since: Timestamp)
        /// Not advancing; with `until`, playing again from that time on.
        case paused(until: Timestamp?)
    }

    /// Intervals and durations the carousel accepts: at least 1 ms (a shorter one would spin the
    /// timer), at most a year.
    public static let intervals: ClosedRange<Duration> = .milliseconds(1) ... .seconds(31_536_000)
    /// Timed pauses the carousel accepts: more than zero, at most a year.
    public static let pauseDurations: ClosedRange<Duration> = .nanoseconds(1) ... .seconds(31_536_000)

    public let banners: [Banner]
    /// The interval of banners without a `duration` of their own.
    public let interval: Duration
    /// The current banner's position; nil exactly when there are no banners.
    public private(set) var index: Int?
    public private(set) var playback: Playback
    public private(set) var version: UInt64

    /// A carousel showing the first banner, playing from `now` when `autoplay`, else paused.
    /// Banner durations and `interval` must lie in `Carousel.intervals`.
    public init(banners: [Banner], interval: Duration, autoplay: Bool = true, now: Timestamp, version: UInt64 = 1) {
        precondition(Self.intervals.contains(interval), "interval outside Carousel.intervals")
        precondition(banners.allSatisfy { $0.duration.map(Self.intervals.contains) ?? true })
        self.banners = banners
        self.interval = interval
        self.index = banners.isEmpty ? nil : 0
        self.playback = autoplay ? .playing(since: now) : .paused(until: nil)
        self.version = version
    }

    /// A carousel restored from a stored `anchor`. An anchor that does not fit the banners (a
    /// position past the end) shows the first banner.
    public init(banners: [Banner], interval: Duration, anchor: CarouselAnchor) {
        precondition(Self.intervals.contains(interval), "interval outside Carousel.intervals")
        self.banners = banners
        self.interval = interval
        self.index = banners.isEmpty ? nil : (anchor.index.flatMap { banners.indices.contains($0) ? $0 : nil } ?? 0)
        self.playback = anchor.playback
        self.version = anchor.version
    }

    /// What a store keeps of the state; with the banners, the interval and a time it gives the
    /// state at that time.
    public var anchor: CarouselAnchor {
        CarouselAnchor(index: index, playback: playback, version: version)
    }

    // MARK: Observable state

    public var count: Int { banners.count }
    public var currentBanner: Banner? { index.map { banners[$0] } }
    /// The banner before the current one, for preloading; nil with fewer than two banners.
    public var previousBanner: Banner? { previousIndex.map { banners[$0] } }
    /// The banner after the current one, for preloading; nil with fewer than two banners.
    public var nextBanner: Banner? { nextIndex.map { banners[$0] } }
    /// The position of `previousBanner`.
    public var previousIndex: Int? { neighbour(offset: count - 1) }
    /// The position of `nextBanner`.
    public var nextIndex: Int? { neighbour(offset: 1) }

    public var isPaused: Bool {
        if case .paused = playback { true } else { false }
    }

    /// When a timed pause ends by itself; nil when playing or paused without end.
    public var pausedUntil: Timestamp? {
        if case .paused(let until) = playback { until } else { nil }
    }

    /// How long the current banner stays current: its own duration, else `interval`.
    public var currentInterval: Duration {
        currentBanner?.duration ?? interval
    }

    /// When the current banner gives way to the next; nil while paused or with < 2 banners.
    public var nextAdvanceAt: Timestamp? {
        guard count >= 2, case .playing(let since) = playback else { return nil }
        return since + currentInterval
    }

    /// The next time the carousel changes by itself (an advance, or the end of a timed pause):
    /// when its owner should call `advance(to:)` again. Nil when nothing is due.
    public var nextChangeAt: Timestamp? {
        pausedUntil ?? nextAdvanceAt
    }

    // MARK: Transitions

    /// Applies the schedule up to `now`: ends a timed pause that has run out, then makes every
    /// advance due by `now`, however many (a stalled process catches up to the schedule).
    public mutating func advance(to now: Timestamp) {
        version += applySchedule(upTo: now)
    }

    /// Brings the schedule up to `now`, then applies `command`. A refused command changes nothing
    /// beyond the schedule catch-up, which would have happened anyway.
    public mutating func apply(_ command: CarouselCommand, at now: Timestamp) throws(CarouselError) {
        advance(to: now)
        let before = observed
        switch command {
        case .next:
            try move(at: now) { index, count in (index + 1) % count }
        case .previous:
            try move(at: now) { index, count in (index + count - 1) % count }
        case .jump(let target):
            guard count > 0 else { throw .noBanners }
            guard (0..<count).contains(target) else { throw .indexOutOfRange(index: target, count: count) }
            try move(at: now) { _, _ in target }
        case .pause(let duration):
            try pause(for: duration, at: now)
        case .resume:
            if isPaused { playback = .playing(since: now) }
        }
        if observed != before { version += 1 }
    }

    /// An operator's edit at `now`: new banners and interval and, when `autoplay` is given and
    /// differs from the playback, playing (a fresh countdown) or paused. The current banner stays
    /// current, its countdown untouched, when its id is still among `banners`; otherwise the first
    /// banner after it (in the old order) that is still there takes over with a full countdown.
    /// Always a change: `version` grows by one.
    public mutating func redefine(
        banners newBanners: [Banner], interval newInterval: Duration, autoplay: Bool?, at now: Timestamp
    ) {
        precondition(Self.intervals.contains(newInterval), "interval outside Carousel.intervals")
        advance(to: now)
        let position = newIndex(in: newBanners)
        let kept = position != nil && currentBanner.map { newBanners[position!].id == $0.id } == true
        self = Carousel(
            banners: newBanners, interval: newInterval,
            anchor: CarouselAnchor(index: position, playback: playback, version: version + 1))
        switch (autoplay, playback) {
        case (true?, .paused): playback = .playing(since: now)
        case (false?, .playing): playback = .paused(until: nil)
        case (_, .playing) where !kept: playback = .playing(since: now)
        default: break
        }
    }

    // MARK: Private

    /// Where the current banner is in `newBanners`, or its first surviving successor; nil when
    /// `newBanners` is empty.
    private func newIndex(in newBanners: [Banner]) -> Int? {
        guard !newBanners.isEmpty else { return nil }
        guard let index else { return 0 }
        for offset in 0..<count {
            let id = banners[(index + offset) % count].id
            if let found = newBanners.firstIndex(where: { $0.id == id }) { return found }
        }
        return 0
    }

    /// What clients can see; `version` moves when this does.
    private struct Observed: Equatable {
        var index: Int?
        var pausedUntil: Timestamp?
        var isPaused: Bool
        var nextAdvanceAt: Timestamp?
    }

    private var observed: Observed {
        Observed(index: index, pausedUntil: pausedUntil, isPaused: isPaused, nextAdvanceAt: nextAdvanceAt)
    }

    private func neighbour(offset: Int) -> Int? {
        guard count >= 2, let index else { return nil }
        return (index + offset) % count
    }

    private func intervalNanoseconds(at position: Int) -> Int64 {
        (banners[position].duration ?? interval).nanoseconds
    }

    /// Returns the number of changes made: the end of a timed pause, and each advance.
    private mutating func applySchedule(upTo now: Timestamp) -> UInt64 {
        var changes: UInt64 = 0
        if case .paused(let until?) = playback, until <= now {
            // The countdown restarts when the pause ended, not when we noticed.
            playback = .playing(since: until)
            changes += 1
        }
        guard count >= 2, var position = index, case .playing(var since) = playback else { return changes }
        let lap = (0..<count).reduce(Int64(0)) { $0 + intervalNanoseconds(at: $1) }
        var stepsInLap = 0
        while true {
            let due = since + .nanoseconds(intervalNanoseconds(at: position))
            guard due <= now else { break }
            since = due
            position = (position + 1) % count
            stepsInLap += 1
            changes += 1
            if stepsInLap == count {
                // Back where this lap began: skip all further whole laps at once, so a long
                // stall costs at most two laps of steps.
                let laps = (now.nanosecondsSinceEpoch - since.nanosecondsSinceEpoch) / lap
                since = since + .nanoseconds(laps * lap)
                changes += UInt64(laps) * UInt64(count)
                stepsInLap = 0
            }
        }
        index = position
        playback = .playing(since: since)
        return changes
    }

    private mutating func move(at now: Timestamp, to target: (_ index: Int, _ count: Int) -> Int) throws(CarouselError)
    {
        guard let index else { throw .noBanners }
        self.index = target(index, count)
        if case .playing = playback { playback = .playing(since: now) }
    }

    private mutating func pause(for duration: Duration?, at now: Timestamp) throws(CarouselError) {
        guard let duration else {
            playback = .paused(until: nil)
            return
        }
        guard Self.pauseDurations.contains(duration) else { throw .pauseDurationOutOfRange(duration) }
        let end = now + duration
        switch playback {
        case .playing:
            playback = .paused(until: end)
        case .paused(nil):
            break  // An open-ended pause (an operator's) outlasts any timed one (a hover's).
        case .paused(let until?):
            playback = .paused(until: max(until, end))  // Timed pauses extend, never shorten.
        }
    }
}

/// The part of a carousel's state a store keeps (docs/STORE.md): which banner, the playback (with
/// the time the countdown started), and the version. Automatic advances are not written: they
/// follow from the anchor and the clock.
public struct CarouselAnchor: Sendable, Hashable {
    public var index: Int?
    public var playback: Carousel.Playback
    public var version: UInt64

    public init(index: Int?, playback: Carousel.Playback, version: UInt64) {
        self.index = index
        self.playback = playback
        self.version = version
    }
}
