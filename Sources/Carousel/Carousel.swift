/// The carousel as a pure value: which banner is current, whether it is playing, and when it
/// next changes by itself. Every transition takes `now`; nothing here reads a clock or does I/O.
///
/// Rules (docs/API.md, the carousel): the list wraps around both ways; while playing, the current banner
/// advances when its interval (its own `duration`, else `interval`) has elapsed since the
/// countdown started, and each next countdown starts at the previous due time, not at "now", so
/// late processing never accumulates drift; a manual move restarts the countdown; a pause stops
/// auto-advance (optionally until a given time) and a resume restarts the countdown; with fewer
/// than two banners nothing advances. `version` grows by one with every observable change.
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
        recordingChange { $0.applySchedule(upTo: now) }
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

    // MARK: Private

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

    private mutating func recordingChange(_ change: (inout Carousel) -> Void) {
        let before = observed
        change(&self)
        if observed != before { version += 1 }
    }

    private func neighbour(offset: Int) -> Int? {
        guard count >= 2, let index else { return nil }
        return (index + offset) % count
    }

    private func intervalNanoseconds(at position: Int) -> Int64 {
        (banners[position].duration ?? interval).nanoseconds
    }

    private mutating func applySchedule(upTo now: Timestamp) {
        if case .paused(let until?) = playback, until <= now {
            // The countdown restarts when the pause ended, not when we noticed.
            playback = .playing(since: until)
        }
        guard count >= 2, var position = index, case .playing(var since) = playback else { return }
        let lap = (0..<count).reduce(Int64(0)) { $0 + intervalNanoseconds(at: $1) }
        var stepsInLap = 0
        while true {
            let due = since + .nanoseconds(intervalNanoseconds(at: position))
            guard due <= now else { break }
            since = due
            position = (position + 1) % count
            stepsInLap += 1
            if stepsInLap == count {
                // Back where this lap began: skip all further whole laps at once, so a long
                // stall costs at most two laps of steps.
                let laps = (now.nanosecondsSinceEpoch - since.nanosecondsSinceEpoch) / lap
                since = since + .nanoseconds(laps * lap)
                stepsInLap = 0
            }
        }
        index = position
        playback = .playing(since: since)
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
