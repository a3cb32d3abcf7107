import TimeZones

/// The carousel as a pure value: which banner is current, which banners rotate, whether it is
/// playing, whether a takeover holds it, and when it next changes by itself. Every transition takes
/// `now`; nothing here reads a clock or does I/O.
///
/// Rules (docs/API.md, the carousel; docs/SCHEDULES.md; docs/WEIGHTS.md): the rotation is the
/// eligible banners in list order (the fallback alone when none is); it is played in turns, each
/// banner as many turns per cycle as its weight, spread by smooth weighted round-robin (one turn
/// each, in list order, when the weights are equal); it wraps around both ways; while playing, the
/// current banner advances when its interval has elapsed since its countdown started, and each next
/// countdown starts when the previous one was due, not at "now", so late processing never drifts.
/// A manual move restarts the countdown; a pause stops advancing (optionally until a time); with
/// fewer than two rotating banners nothing advances. When the rotation changes, the current banner
/// stays if it is still in it (at its first turn of the new cycle), countdown untouched; otherwise the
/// next one in list order takes over with a full countdown. A takeover freezes all of this until it
/// ends.
///
/// Audiences (docs/AUDIENCES.md): the value is the state of screens that declare no audience, over
/// the banners meant for every audience; it carries the state of each audience the banners name
/// (`state(for:)`), each over its own rotation with its own turn, countdown and `version`. Time
/// and commands move them all together.
///
/// `version` grows by one with every observable change, automatic ones included (each counted, even
/// those a stalled process catches up on at once), so that the state and `version` at a time are a
/// pure function of the lineup, an `anchor` and that time (docs/STORE.md).
public struct Carousel: Sendable, Hashable {
    /// Whether the carousel advances by itself.
    public enum Playback: Sendable, Hashable {
        /// Advancing; the current countdown started at `since`.
        case playing(since: Timestamp)
        /// Not advancing; with `until`, playing again from that time on.
        case paused(until: Timestamp?)
    }

    /// One banner on every screen, the rotation frozen behind it.
    public struct Takeover: Sendable, Hashable {
        public var banner: Banner
        /// When it ends by itself; nil: when ended.
        public var until: Timestamp?
        /// The time the frozen rotation is the rotation of: the start, or the last edit since.
        public var frozenAt: Timestamp

        public init(banner: Banner, until: Timestamp?, frozenAt: Timestamp) {
            self.banner = banner
            self.until = until
            self.frozenAt = frozenAt
        }
    }

    /// Intervals and durations the carousel accepts: at least 1 ms (a shorter one would spin the
    /// timer), at most a year.
    public static let intervals: ClosedRange<Duration> = .milliseconds(1) ... .seconds(31_536_000)
    /// Timed pauses and takeovers the carousel accepts: more than zero, at most a year.
    public static let pauseDurations: ClosedRange<Duration> = .nanoseconds(1) ... .seconds(31_536_000)

    /// The banners and their settings, behind one reference shared by every audience's state: a
    /// `Carousel` is copied into several places per carousel (the engine, the prepared reads, the
    /// history), so its large and rarely changed parts are kept out of line (docs/PERFORMANCE.md).
    public var lineup: Lineup { sharedLineup.value }
    private let sharedLineup: Boxed<Lineup>
    /// The audience whose screens this state is for; nil for screens that declare none.
    public let audience: String?
    /// The state of each audience the banners name, by name; empty in an audience's own state.
    public private(set) var audienceStates: [String: Carousel]
    /// The current turn: its place in `turns` (under a takeover, the one that comes back); nil
    /// exactly when the rotation is empty.
    public private(set) var turn: Int?
    /// The positions in `banners` of the rotating banners, in list order.
    public private(set) var rotation: [Int]
    public private(set) var playback: Playback
    public private(set) var takeover: Takeover? {
        get { boxedTakeover?.value }
        set { boxedTakeover = newValue.map(Boxed.init) }
    }
    /// Out of line as `lineup` is (a takeover holds a whole banner, and is rare).
    private var boxedTakeover: Boxed<Takeover>?
    public private(set) var version: UInt64
    /// When the state last changed; it holds from then until `nextChangeAt`.
    public private(set) var changedAt: Timestamp
    private var schedule: Derived<ScheduleCursor>
    /// The weighted cycle of `rotation` (positions, each as often as its weight); nil when the
    /// weights are equal and the cycle is `rotation` itself (the common case, kept free).
    private var cycle: Derived<[Int]?>

    /// A carousel showing the first rotating banner at `now`, playing from `now` when `autoplay`,
    /// else paused. Banner durations and the interval must lie in `Carousel.intervals`.
    public init(lineup: Lineup, autoplay: Bool = true, now: Timestamp, version: UInt64 = 1) {
        let shared = Boxed(lineup)
        self.init(lineup: shared, audience: nil, autoplay: autoplay, now: now, version: version)
        for name in lineup.audiences {
            audienceStates[name] = Carousel(
                lineup: shared, audience: name, autoplay: autoplay, now: now, version: version)
        }
    }

    private init(lineup shared: Boxed<Lineup>, audience: String?, autoplay: Bool, now: Timestamp, version: UInt64) {
        let lineup = shared.value
        precondition(Self.intervals.contains(lineup.interval), "interval outside Carousel.intervals")
        precondition(lineup.banners.allSatisfy { $0.duration.map(Self.intervals.contains) ?? true })
        sharedLineup = shared
        self.audience = audience
        audienceStates = [:]
        schedule = Derived(value: ScheduleCursor(lineup, at: now))
        rotation = schedule.value.rotation(of: lineup, for: audience)
        cycle = Derived(value: Self.cycle(of: rotation, in: lineup.banners))
        turn = rotation.isEmpty ? nil : 0
        playback = autoplay ? .playing(since: now) : .paused(until: nil)
        boxedTakeover = nil
        self.version = version
        changedAt = now
    }

    /// A carousel restored from a stored `anchor`. A position that no longer fits (a banner
    /// removed, or no longer eligible) gives way to the next rotating one, as an edit would. An
    /// audience the anchor does not know starts as a new one does (`joining`).
    public init(lineup: Lineup, anchor: CarouselAnchor) {
        let shared = Boxed(lineup)
        self.init(lineup: shared, audience: nil, anchor: anchor)
        for name in lineup.audiences {
            var own = anchor.audiences[name] ?? Self.joining(anchor)
            own.takeover = anchor.takeover  // one takeover holds every audience; stored once
            audienceStates[name] = Carousel(lineup: shared, audience: name, anchor: own)
            audienceStates[name]?.boxedTakeover = boxedTakeover
        }
    }

    private init(lineup shared: Boxed<Lineup>, audience: String?, anchor: CarouselAnchor) {
        let lineup = shared.value
        precondition(Self.intervals.contains(lineup.interval), "interval outside Carousel.intervals")
        sharedLineup = shared
        self.audience = audience
        audienceStates = [:]
        // Under a takeover the rotation is the one it froze.
        schedule = Derived(value: ScheduleCursor(lineup, at: anchor.takeover?.frozenAt ?? anchor.changedAt))
        let rotation = schedule.value.rotation(of: lineup, for: audience)
        let stored = anchor.index.flatMap { lineup.banners.indices.contains($0) ? $0 : nil }
        self.rotation = rotation
        let cycle = Self.cycle(of: rotation, in: lineup.banners)
        self.cycle = Derived(value: cycle)
        let position = stored.flatMap { rotation.contains($0) ? $0 : nil } ?? Self.successor(of: stored, in: rotation)
        // The stored turn when it still shows that banner; else the banner's first turn.
        let turns = cycle ?? rotation
        turn =
            if let kept = anchor.turn, let position, turns.indices.contains(kept), turns[kept] == position {
                kept
            } else {
                position.flatMap { turns.firstIndex(of: $0) }
            }
        playback = anchor.playback
        boxedTakeover = anchor.takeover.map(Boxed.init)
        version = anchor.version
        changedAt = anchor.changedAt
    }

    /// A carousel of `banners` that always rotate, in UTC: v1's carousel.
    public init(banners: [Banner], interval: Duration, autoplay: Bool = true, now: Timestamp, version: UInt64 = 1) {
        self.init(lineup: Lineup(banners: banners, interval: interval), autoplay: autoplay, now: now, version: version)
    }

    /// What a store keeps of the state; with the lineup and a time it gives the state at that time.
    /// Each audience's anchor is kept without the takeover, which is the carousel's.
    public var anchor: CarouselAnchor {
        var anchor = ownAnchor
        anchor.audiences = audienceStates.mapValues { state in
            var own = state.ownAnchor
            own.takeover = nil
            return own
        }
        return anchor
    }

    private var ownAnchor: CarouselAnchor {
        CarouselAnchor(
            index: position, playback: playback, version: version, takeover: takeover, changedAt: changedAt, turn: turn)
    }

    /// The state screens of `audience` see: its own when the banners name it, else this one (a
    /// screen of an audience no banner names sees the banners meant for every audience). Without
    /// the other audiences' states.
    public func state(for audience: String?) -> Carousel {
        if let audience, let state = audienceStates[audience] { return state }
        guard !audienceStates.isEmpty else { return self }
        var state = self
        state.audienceStates = [:]
        return state
    }

    /// `audience` when the banners name it (its screens see its own state), else nil (they see the
    /// state of no audience): what their plays, views and clicks count under (docs/STATS.md).
    public func audienceWithOwnState(_ audience: String?) -> String? {
        audience.flatMap { audienceStates[$0] == nil ? nil : $0 }
    }

    /// The anchor an audience starts from when it appears (an edit names it for the first time, or
    /// a row stored before it was named): the carousel's, at the first turn of the banner it shows
    /// (or the next one the audience has), with the carousel's `version`, which its screens have
    /// seen last.
    private static func joining(_ anchor: CarouselAnchor) -> CarouselAnchor {
        var own = anchor
        own.turn = nil
        own.audiences = [:]
        return own
    }

    // MARK: Observable state

    public var banners: [Banner] { lineup.banners }
    /// The interval of banners without a `duration` of their own.
    public var interval: Duration { lineup.interval }
    /// The position in `banners` of the rotation's current banner (under a takeover, of the one
    /// that comes back); nil exactly when the rotation is empty.
    public var position: Int? { turn.map { turns[$0] } }
    /// The rotation in the order it is played: positions in `banners`, one per turn of a cycle.
    public var turns: [Int] { cycle.value ?? rotation }
    /// How many banners rotate.
    public var count: Int { rotation.count }
    /// The current banner's place in the rotation; nil exactly when nothing rotates.
    public var index: Int? { position.flatMap { rotation.firstIndex(of: $0) } }
    /// What every screen shows: the takeover's banner, else the rotation's current one.
    public var currentBanner: Banner? { takeover?.banner ?? position.map { banners[$0] } }
    /// The position in `banners` of what screens show; nil under a takeover or with nothing to show.
    public var shownPosition: Int? { takeover == nil ? position : nil }
    /// The position of the banner before the current one, for preloading; nil with fewer than two
    /// rotating banners or under a takeover.
    public var previousPosition: Int? { neighbour(offset: -1) }
    /// The position of the banner the next turn shows (the current one again when it has two
    /// turns in a row).
    public var nextPosition: Int? { neighbour(offset: 1) }
    public var previousBanner: Banner? { previousPosition.map { banners[$0] } }
    public var nextBanner: Banner? { nextPosition.map { banners[$0] } }
    /// Each banner's share of the turns of a cycle (its weight over the rotation's total), by
    /// position; nil for a banner that does not rotate now.
    public var shares: [Double?] {
        shares { Double(banners[$0].weight) }
    }
    /// Each banner's planned share of the airtime of a cycle (its weight × its duration over the
    /// rotation's total), by position; nil for a banner that does not rotate now.
    public var airtimeShares: [Double?] {
        shares { Double(banners[$0].weight) * interval(at: $0).seconds }
    }
    /// The ids of the rotating banners, in order.
    public var rotationIDs: [String] { rotation.map { banners[$0].id } }

    public var isPaused: Bool {
        if case .paused = playback { true } else { false }
    }

    /// When a timed pause ends by itself; nil when playing or paused without end.
    public var pausedUntil: Timestamp? {
        if case .paused(let until) = playback { until } else { nil }
    }

    /// How long the shown banner stays: its own duration, else `interval`.
    public var currentInterval: Duration {
        currentBanner?.duration ?? interval
    }

    /// When the current banner gives way to the next; nil while paused, under a takeover or with
    /// fewer than two rotating banners.
    public var nextAdvanceAt: Timestamp? {
        guard takeover == nil, count >= 2, let position, case .playing(let since) = playback else { return nil }
        return since + (banners[position].duration ?? interval)
    }

    /// The next time the carousel may change by itself (an advance, a schedule boundary, the end of
    /// a timed pause or of a takeover): when its owner should call `advance(to:)` again.
    public var nextChangeAt: Timestamp? {
        audienceStates.values.reduce(ownNextChangeAt) { earliest($0, $1.ownNextChangeAt) }
    }

    /// `nextChangeAt` of this state alone, without the audiences': until when what screens of no
    /// audience see holds.
    public var ownNextChangeAt: Timestamp? {
        earliest(nextAdvanceAt, otherChangeAt)
    }

    // MARK: Transitions

    /// Applies the schedule up to `now`: every change due by `now`, in order, however many (a
    /// stalled process catches up to what the schedule says).
    public mutating func advance(to now: Timestamp) {
        updateEveryState { $0.advanceOwn(to: now) }
    }

    private mutating func advanceOwn(to now: Timestamp) {
        while let due = ownNextChangeAt, due <= now {
            // Advances only, until the next other change: skip whole laps of them at once, so a
            // long stall costs at most two laps of steps per rotation.
            if due == nextAdvanceAt, skipWholeLaps(upTo: min(now, otherChangeAt.map { $0 + .nanoseconds(-1) } ?? now)) {
                continue
            }
            step(at: due)
        }
    }

    /// Brings the schedule up to `now`, then applies `command` to every audience's state
    /// (docs/AUDIENCES.md): next and previous move each audience that has banners (refused only
    /// when none has); a jump goes to a banner of its audience's rotation, in every audience that
    /// has it. A refused command changes nothing beyond the schedule catch-up, which would have
    /// happened anyway.
    public mutating func apply(_ command: CarouselCommand, at now: Timestamp) throws(CarouselError) {
        advance(to: now)
        var changed = self
        if case .jump(let target, let audience) = command {
            let chosen = state(for: audience)
            if let takeover { throw .takeoverInProgress(bannerID: takeover.banner.id) }
            guard (0..<chosen.count).contains(target) else {
                throw chosen.count == 0 ? .noBanners : .indexOutOfRange(index: target, count: chosen.count)
            }
            let position = chosen.rotation[target]
            changed.updateEveryState { $0.jumpOwn(to: position, at: now) }
        } else {
            var moved = false
            try changed.updateEveryState { (state) throws(CarouselError) in
                try state.applyOwn(command, at: now, moved: &moved)
            }
            if !moved, command == .next || command == .previous { throw .noBanners }
        }
        self = changed
    }

    /// `update` on this state, then on each audience's.
    private mutating func updateEveryState<Failure: Error>(_ update: (inout Carousel) throws(Failure) -> Void)
        throws(Failure)
    {
        try update(&self)
        for index in audienceStates.values.indices { try update(&audienceStates.values[index]) }
    }

    /// `command` applied to this state alone; `moved` set when a move found banners to move in.
    private mutating func applyOwn(_ command: CarouselCommand, at now: Timestamp, moved: inout Bool)
        throws(CarouselError)
    {
        let before = observed
        switch command {
        case .next, .previous:
            do throws(CarouselError) {
                try move(command, at: now)
                moved = true
            } catch .noBanners {
                return
            }
        case .jump:
            preconditionFailure("a jump is resolved by apply")
        case .pause(let duration):
            try pause(for: duration, at: now)
        case .resume:
            if isPaused { playback = .playing(since: now) }
        case .startTakeover(let banner, let duration):
            if let duration, !Self.pauseDurations.contains(duration) { throw .takeoverDurationOutOfRange(duration) }
            // A takeover replacing another keeps the rotation frozen when the first one began.
            takeover = Takeover(banner: banner, until: duration.map { now + $0 }, frozenAt: takeover?.frozenAt ?? now)
        case .endTakeover:
            if takeover != nil { endTakeover(at: now) }
        }
        recordChange(since: before, at: now)
    }

    /// An operator's edit at `now`: a new lineup and, when `autoplay` is given and differs from the
    /// playback, playing (a fresh countdown) or paused. The current banner stays current, its
    /// countdown untouched, when it is still there and eligible; otherwise the next banner in list
    /// order that rotates takes over with a full countdown. Always a change: `version` grows by one.
    /// In every audience's state alike; an audience the edit names for the first time starts from
    /// this state (`joining`), and when it drops one, whose screens now see this state, this
    /// `version` moves past that audience's (a screen never sees a version go back).
    public mutating func redefine(_ newLineup: Lineup, autoplay: Bool?, at now: Timestamp) {
        advance(to: now)
        let before = audienceStates
        let newLineup = Boxed(newLineup)
        redefineOwn(newLineup, autoplay: autoplay, at: now)
        let names = newLineup.value.audiences
        if let dropped = before.filter({ !names.contains($0.key) }).values.map(\.version).max(), dropped >= version {
            version = dropped + 1
        }
        let joining = Self.joining(ownAnchor)
        for name in names {
            if var state = before[name] {
                state.redefineOwn(newLineup, autoplay: autoplay, at: now)
                audienceStates[name] = state
            } else {
                audienceStates[name] = Carousel(lineup: newLineup, audience: name, anchor: joining)
            }
        }
    }

    private mutating func redefineOwn(_ shared: Boxed<Lineup>, autoplay: Bool?, at now: Timestamp) {
        let newLineup = shared.value
        precondition(Self.intervals.contains(newLineup.interval), "interval outside Carousel.intervals")
        let cursor = ScheduleCursor(newLineup, at: now)
        let newRotation = cursor.rotation(of: newLineup, for: audience)
        let newPosition = carriedPosition(into: newLineup.banners, rotation: newRotation)
        let kept = newPosition != nil && position.map { banners[$0].id } == newPosition.map { newLineup.banners[$0].id }
        var frozen = takeover
        frozen?.frozenAt = now  // the edit's rotation replaces the frozen one
        var revised = Carousel(
            lineup: shared, audience: audience,
            anchor: CarouselAnchor(
                index: newPosition, playback: playback, version: version + 1, takeover: frozen, changedAt: now))
        // The same turns (by id) keep the current turn: an edit of a caption does not restart the
        // cycle. Any other change of the rotation or its weights re-spreads it (the banner's first
        // turn, as the anchor without a turn gave).
        if revised.turns.map({ newLineup.banners[$0].id }) == turns.map({ banners[$0].id }) { revised.turn = turn }
        switch (autoplay, revised.playback) {
        case (true?, .paused): revised.playback = .playing(since: now)
        case (false?, .playing): revised.playback = .paused(until: nil)
        case (_, .playing) where !kept: revised.playback = .playing(since: now)
        default: break
        }
        self = revised
    }

    // MARK: Private

    /// What clients can see; `version` moves when this does.
    private struct Observed: Equatable {
        var turn: Int?
        var rotation: [Int]
        var isPaused: Bool
        var pausedUntil: Timestamp?
        var nextAdvanceAt: Timestamp?
        var takeover: Takeover?
    }

    private var observed: Observed {
        Observed(
            turn: turn, rotation: rotation, isPaused: isPaused, pausedUntil: pausedUntil,
            nextAdvanceAt: nextAdvanceAt, takeover: takeover)
    }

    private mutating func recordChange(since before: Observed, at time: Timestamp) {
        guard observed != before else { return }
        version += 1
        changedAt = time
    }

    /// The earliest change other than an advance: a boundary (not under a takeover), the end of
    /// a timed pause or of the takeover.
    private var otherChangeAt: Timestamp? {
        earliest(earliest(takeover == nil ? schedule.value.nextChange : nil, pausedUntil), takeover?.until)
    }

    /// The first of `rotation` after `position` in list order, wrapping; its first when `position`
    /// is nil; nil when `rotation` is empty.
    private static func successor(of position: Int?, in rotation: [Int]) -> Int? {
        guard let position else { return rotation.first }
        return rotation.first { $0 > position } ?? rotation.first
    }

    private func neighbour(offset: Int) -> Int? {
        guard takeover == nil, count >= 2, let turn else { return nil }
        let turns = turns
        return turns[(turn + offset + turns.count) % turns.count]
    }

    /// Each rotating banner's `amount` over the rotation's total, by position; nil for the others.
    private func shares(_ amount: (_ position: Int) -> Double) -> [Double?] {
        var shares = [Double?](repeating: nil, count: banners.count)
        let total = rotation.reduce(0) { $0 + amount($1) }
        for position in rotation { shares[position] = amount(position) / total }
        return shares
    }

    /// The nearest turn from `turn`, `step` by `step` (1 or -1), that shows another banner; `turn`
    /// when there is none. An operator's next or previous always changes what screens show.
    private func otherTurn(from turn: Int, step: Int) -> Int {
        let turns = turns
        for distance in 1..<max(turns.count, 1) {
            let other = (turn + step * distance % turns.count + turns.count) % turns.count
            if turns[other] != turns[turn] { return other }
        }
        return turn
    }

    /// The first turn of the banner at `position` in the cycle; nil for nil.
    private func firstTurn(of position: Int?) -> Int? {
        position.flatMap { turns.firstIndex(of: $0) }
    }

    /// The cycle of `rotation` by smooth weighted round-robin (docs/WEIGHTS.md): at each turn every
    /// banner gains its weight, the largest running total (the first in list order among equals)
    /// is shown and loses the sum of the weights. Nil when the weights are equal: the cycle is
    /// then the rotation itself, each banner once. Costs count × sum of the weights, which the
    /// definition bounds (`BannerDecoding.maximumCycleWork`).
    static func cycle(of rotation: [Int], in banners: [Banner]) -> [Int]? {
        let weights = rotation.map { banners[$0].weight }
        guard let first = weights.first, weights.contains(where: { $0 != first }) else { return nil }
        let total = weights.reduce(0, +)
        var running = [Int](repeating: 0, count: weights.count)
        var cycle: [Int] = []
        cycle.reserveCapacity(total)
        for _ in 0..<total {
            var largest = 0
            for member in weights.indices {
                running[member] += weights[member]
                if running[member] > running[largest] { largest = member }
            }
            running[largest] -= total
            cycle.append(rotation[largest])
        }
        return cycle
    }

    private func interval(at position: Int) -> Duration {
        banners[position].duration ?? interval
    }

    /// Every change due at `time` (`nextChangeAt`), in a fixed order: the takeover ends, a timed
    /// pause ends, the rotation follows the schedule, the current banner advances.
    private mutating func step(at time: Timestamp) {
        let before = observed
        var rotationDue = takeover == nil && schedule.value.nextChange.map { $0 <= time } == true
        if let until = takeover?.until, until <= time {
            endTakeover(at: time)
            rotationDue = false  // done by endTakeover
        }
        if case .paused(let until?) = playback, until <= time {
            playback = .playing(since: until)  // the countdown restarts when the pause ended
        }
        if rotationDue { followSchedule(at: time) }
        if takeover == nil, count >= 2, let turn, let position, case .playing(let since) = playback,
            since + interval(at: position) <= time
        {
            self.turn = (turn + 1) % turns.count
            playback = .playing(since: time)
        }
        recordChange(since: before, at: time)
    }

    /// The rotation as the schedule has it at `time`; the current banner kept when it is still in it.
    private mutating func followSchedule(at time: Timestamp) {
        schedule.value.update(lineup, at: time)
        let newRotation = schedule.value.rotation(of: lineup, for: audience)
        guard newRotation != rotation else { return }  // a boundary that changed nothing keeps the turn
        let position = position
        rotation = newRotation
        cycle.value = Self.cycle(of: newRotation, in: banners)
        if let position, newRotation.contains(position) {
            turn = firstTurn(of: position)
            return
        }
        turn = firstTurn(of: Self.successor(of: position, in: newRotation))
        if case .playing = playback { playback = .playing(since: time) }
    }

    private mutating func endTakeover(at time: Timestamp) {
        takeover = nil
        if case .playing = playback { playback = .playing(since: time) }
        followSchedule(at: time)
    }

    /// Steps whole laps of advances at once: back at the same turn, `version` up by one per
    /// advance, the countdown at the lap's end. Only laps that end by `limit`. Returns whether
    /// there was one.
    private mutating func skipWholeLaps(upTo limit: Timestamp) -> Bool {
        guard count >= 2, case .playing(let since) = playback else { return false }
        let turns = turns
        let lap = turns.reduce(Int64(0)) { $0 + interval(at: $1).nanoseconds }
        let laps = (limit.nanosecondsSinceEpoch - since.nanosecondsSinceEpoch) / lap
        guard laps > 0 else { return false }
        let end = since + .nanoseconds(laps * lap)
        playback = .playing(since: end)
        version += UInt64(laps) * UInt64(turns.count)
        changedAt = end
        return true
    }

    /// Where the current banner goes in `newBanners`: the same banner when it rotates there;
    /// otherwise, the first that rotates after it (in the new order when it is still listed, else
    /// after its first listed successor of the old order).
    private func carriedPosition(into newBanners: [Banner], rotation newRotation: [Int]) -> Int? {
        guard let position else { return newRotation.first }
        for offset in 0..<banners.count {
            let id = banners[(position + offset) % banners.count].id
            guard let found = newBanners.firstIndex(where: { $0.id == id }) else { continue }
            return newRotation.contains(found) ? found : Self.successor(of: found, in: newRotation)
        }
        return newRotation.first
    }

    /// Next and previous go to the nearest turn of another banner.
    private mutating func move(_ command: CarouselCommand, at now: Timestamp) throws(CarouselError) {
        if let takeover { throw .takeoverInProgress(bannerID: takeover.banner.id) }
        guard let turn else { throw .noBanners }
        self.turn = otherTurn(from: turn, step: command == .next ? 1 : -1)
        if case .playing = playback { playback = .playing(since: now) }
    }

    /// A jump to the first turn of the banner at `position`, when it rotates here (another
    /// audience's banner leaves this state as it is).
    private mutating func jumpOwn(to position: Int, at now: Timestamp) {
        guard rotation.contains(position) else { return }
        let before = observed
        turn = firstTurn(of: position)
        if case .playing = playback { playback = .playing(since: now) }
        recordChange(since: before, at: now)
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
/// the time the countdown started), the takeover, the version and when it last changed. Automatic
/// changes (advances, boundaries, ends) are not written: they follow from the anchor and the clock.
public struct CarouselAnchor: Sendable, Hashable {
    /// The position in the banners of the rotation's current banner.
    public var index: Int?
    public var playback: Carousel.Playback
    public var version: UInt64
    public var takeover: Carousel.Takeover?
    /// When the state was last changed: schedule boundaries after it are still to come.
    public var changedAt: Timestamp
    /// The current turn in the weighted cycle (docs/WEIGHTS.md); nil: the banner's first turn.
    public var turn: Int?
    /// Each audience's own anchor, by name (docs/AUDIENCES.md), without the takeover (this one's).
    public var audiences: [String: CarouselAnchor]

    public init(
        index: Int?, playback: Carousel.Playback, version: UInt64, takeover: Carousel.Takeover? = nil,
        changedAt: Timestamp, turn: Int? = nil, audiences: [String: CarouselAnchor] = [:]
    ) {
        self.index = index
        self.audiences = audiences
        self.turn = turn
        self.playback = playback
        self.version = version
        self.takeover = takeover
        self.changedAt = changedAt
    }
}

/// The earlier of two optional times; nil only when both are. (No array: this runs at every step
/// of a schedule.)
func earliest(_ first: Timestamp?, _ second: Timestamp?) -> Timestamp? {
    guard let first else { return second }
    guard let second else { return first }
    return min(first, second)
}
