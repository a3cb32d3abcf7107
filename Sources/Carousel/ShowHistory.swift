import TimeZones

/// What a carousel showed over the last `span`, to tell what it showed at any instant of it: the
/// ground truth a screen's receipt is checked against (docs/SCREENS.md, "In step").
///
/// Only states that do not follow from the one before are kept — after a command, an edit, a
/// state followed from the store —, each with the instant it took effect. The automatic changes
/// between them (advances, schedule boundaries, ends of pauses and takeovers) follow from the
/// state before, as they did live: the carousel is a pure function of its state and the time.
/// A carousel advancing every second for an hour keeps one state, not 3,600.
public struct ShowHistory: Sendable {
    /// How far back what was shown is known: at least this long before the latest state recorded,
    /// unless more than `maxStates` were recorded in it.
    public let span: Duration
    /// The most states kept: a flood of commands (thousands a second, each a state) must neither
    /// grow memory for an hour nor make each record slower; receipts from before the oldest kept
    /// are then not judged (docs/SCREENS.md, "In step").
    public static let maxStates = 10_000
    /// Oldest first from `first` (those before it are let go, and dropped from the array in
    /// batches: dropping one at a time moved the whole array on every command); each governs from
    /// its instant to the next one's.
    private var states: [(from: Timestamp, state: Carousel)]
    private var first = 0
    /// Moves at every `record`: what was worked out from the history before (when a screen is
    /// frozen from) holds as long as it has not moved.
    public private(set) var generation: UInt64 = 0
    /// The last answer `shownRemembering` worked out, and the instants it holds for: a fleet's
    /// screens report the same flip thousands of times, and working each out from scratch
    /// advanced a copy of the carousel every time. Forgotten at every `record`.
    private var remembered: (audience: String?, from: Timestamp, until: Timestamp, shown: Shown)?

    /// A change of what is shown: from `at` on, `banner` (nil: nothing).
    public struct Transition: Sendable, Equatable {
        public let at: Timestamp
        public let banner: Banner?
    }

    /// What was shown at an instant: `banner` (nil: nothing), shown since `since` (the carousel's
    /// last change by then), in the state of `version`.
    public struct Shown: Sendable, Equatable {
        public let banner: Banner?
        public let since: Timestamp
        public let version: UInt64
    }

    /// A history that starts with `initial`, in effect from `from`.
    public init(initial: Carousel, from: Timestamp, span: Duration = .seconds(3600)) {
        self.span = span
        states = [(from, initial)]
    }

    /// `state` takes effect at `from` (a command, an edit, a change followed from the store).
    /// States older than `span` before it are let go, but for the one in effect then. A state
    /// recorded before the latest one (a clock that went back) replaces what came after it.
    public mutating func record(_ state: Carousel, from: Timestamp) {
        generation &+= 1
        remembered = nil
        while states.count > first, let last = states.last, last.from > from { states.removeLast() }
        states.append((from, state))
        first = max(first, lastIndex(atOrBefore: from - span) ?? first, states.count - Self.maxStates)
        if first > states.count / 2 {
            states.removeFirst(first)
            first = 0
        }
    }

    /// The index of the last state kept from `time` or before, found by halving (the states are
    /// in order); nil when all are later.
    private func lastIndex(atOrBefore time: Timestamp) -> Int? {
        var (low, high) = (first, states.count)  // the answer is below `high`
        while low < high {
            let middle = (low + high) / 2
            if states[middle].from <= time { low = middle + 1 } else { high = middle }
        }
        return low > first ? low - 1 : nil
    }

    /// `state`, the result of a change made at `now` (a command, an edit, or a change another
    /// process made and this one followed), in effect from the carousel's last change when that
    /// is not before the latest state kept (a command here or elsewhere: its own instant), else
    /// from `now` (an edit that kept what was shown: it cannot change the past).
    public mutating func recordChange(_ state: Carousel, madeAt now: Timestamp) {
        let latest = states[states.count - 1].from  // never empty: the latest state is always kept
        record(state, from: state.changedAt >= latest && state.changedAt <= now ? state.changedAt : now)
    }

    /// The earliest instant this history knows what was shown at.
    public var knownFrom: Timestamp { states[first].from }

    /// What was shown at `time` to screens of `audience` (docs/AUDIENCES.md); nil before `knownFrom`.
    public func shown(at time: Timestamp, audience: String? = nil) -> Shown? {
        workOut(at: time, audience: audience)?.shown
    }

    /// `shown(at:audience:)`, remembering the answer for the instants it holds for.
    public mutating func shownRemembering(at time: Timestamp, audience: String? = nil) -> Shown? {
        if let remembered, remembered.audience == audience, remembered.from <= time, time < remembered.until {
            return remembered.shown
        }
        guard let (shown, until) = workOut(at: time, audience: audience) else { return nil }
        remembered = (audience, shown.since, until, shown)
        return shown
    }

    /// What was shown at `time`, and until when that holds: the state in effect then does not
    /// change from its last change (`since`) to its next one or the next state recorded.
    private func workOut(at time: Timestamp, audience: String?) -> (shown: Shown, until: Timestamp)? {
        guard let index = governing(time) else { return nil }
        var state = states[index].state.state(for: audience)
        state.advance(to: time)
        let shown = Shown(
            banner: state.currentBanner, since: max(state.changedAt, states[index].from), version: state.version)
        let nextState = index + 1 < states.count ? states[index + 1].from : Timestamp.distantFuture
        return (shown, min(state.nextChangeAt ?? .distantFuture, nextState))
    }

    /// The changes of the shown banner after `start`, up to and including `end`, at most `limit`
    /// of them (and at most 1,000 steps of the carousel's: a request's work stays bounded).
    public func transitions(after start: Timestamp, through end: Timestamp, limit: Int, audience: String? = nil)
        -> [Transition]
    {
        walk(after: start, through: end, limit: limit, audience: audience).found
    }

    /// `transitions`, and whether they are all there are through `end` (false when `limit` or
    /// the steps ran out first).
    func walk(after start: Timestamp, through end: Timestamp, limit: Int, audience: String? = nil) -> (
        found: [Transition], complete: Bool
    ) {
        guard limit > 0 else { return ([], false) }
        guard var index = governing(start) ?? (states[first].from <= end ? first : nil) else { return ([], true) }
        // Only the audience's state is stepped (`state(for:)` leaves the others out).
        var state = states[index].state.state(for: audience)
        state.advance(to: max(start, states[index].from))
        var shownID = state.currentBanner?.id
        var found: [Transition] = []
        var steps = 0
        while found.count < limit, steps < 1000 {
            steps += 1
            let nextState = index + 1 < states.count ? states[index + 1].from : nil
            if let due = state.nextChangeAt, due <= end, nextState.map({ due < $0 }) ?? true {
                state.advance(to: due)
                guard state.currentBanner?.id != shownID else { continue }
                shownID = state.currentBanner?.id
                found.append(Transition(at: due, banner: state.currentBanner))
            } else if let nextState, nextState <= end {
                index += 1
                state = states[index].state.state(for: audience)
                state.advance(to: nextState)
                guard state.currentBanner?.id != shownID else { continue }
                shownID = state.currentBanner?.id
                if nextState > start { found.append(Transition(at: nextState, banner: state.currentBanner)) }
            } else {
                return (found, true)
            }
        }
        return (found, false)
    }

    /// The index of the state in effect at `time`.
    private func governing(_ time: Timestamp) -> Int? {
        lastIndex(atOrBefore: time)
    }
}
