import Carousel
import Dispatch
import Logging
import Metrics
import Store
import Threading
import TimeZones

/// A view as a screen reports it (docs/STATS.md): its banner, when it began, and the id the screen
/// made for it, if any: a view with an id counts once however often it is sent.
public struct ReportedView: Sendable, Equatable {
    public let banner: String
    public let at: Timestamp
    public let id: String?

    public init(banner: String, at: Timestamp, id: String? = nil) {
        self.banner = banner
        self.at = at
        self.id = id
    }
}

/// Proof of play (docs/STATS.md): the plays this process sees, and the views and clicks it is
/// told of, counted in memory and handed to the store every `flushInterval`, before stats are
/// read, and at stop. What a flush could not store is kept for the next one.
///
/// Plays come from the carousels' published states (`observe`, inside each engine); a play is
/// the current banner from the moment it became current, for the screens of one audience (each
/// audience's state plays apart, docs/AUDIENCES.md). Every replica sees the same plays with the
/// same starts (the anchor is shared), and the store keeps each once.
public final class PlayRecorder: Sendable {
    private let store: any CarouselStore
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Timestamp
    private let logger: Logger
    private let counts = Lock(Counts())
    /// Held for a whole flush: one at a time, so that what a failed one puts back is never
    /// overtaken by a later one.
    private let flushing = Lock(FlushState())
    /// Dispatch sources are thread-safe; the `DispatchSourceTimer` protocol just is not Sendable.
    nonisolated(unsafe) private let timer: DispatchSourceTimer
    private let flushInterval: DispatchTimeInterval

    private struct Counts {
        /// The play going on for the screens of each audience of each carousel.
        var current: [PlayingFor: CurrentPlay] = [:]
        /// The audiences with a play going on, of each carousel whose banners name some.
        var audiences: [Int64: [String]] = [:]
        /// Plays that ended since the last flush.
        var ended: [PlayRecord] = []
        var engagement: [EngagementCount.Key: (views: Int64, clicks: Int64)] = [:]
        /// Views with ids since the last flush, a repeat among them once; the store counts each
        /// whose id it does not know.
        var identified: [IdentifiedView.Key: IdentifiedView] = [:]
        /// The flush that will take what is counted from now: counted with generation g, a view
        /// is stored once a flush of generation g or later has been written.
        var generation: UInt64 = 1
    }

    /// A carousel (by serial) and an audience (nil: screens of none).
    private struct PlayingFor: Hashable {
        let carousel: Int64
        let audience: String?
    }

    private struct CurrentPlay {
        var record: PlayRecord
        /// When the state last seen would change by itself: the play cannot have lasted beyond
        /// it, whatever the time when this process reports it (its timer may be late).
        var until: Timestamp?
        /// False for a play this process found going on (at start, or a carousel it just began
        /// to serve): it may have begun earlier, in a process that stored it. The next flush
        /// asks the store before reporting it.
        var checked: Bool
    }

    private struct FlushState {
        /// Whether the last flush failed, so that a store that stays down is logged once.
        var failing = false
        /// The generation of the last flush the store took: everything counted before it is stored.
        var stored: UInt64 = 0
    }

    init(
        store: any CarouselStore, flushInterval: Duration, metrics: ServiceMetrics, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        self.store = store
        self.metrics = metrics
        self.clock = clock
        self.logger = logger
        self.flushInterval = .nanoseconds(Int(flushInterval.nanoseconds))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "carousel.stats"))
        timer.schedule(deadline: .distantFuture)
        // Resumed at once, unarmed: Dispatch aborts when a source is released while suspended.
        timer.resume()
    }

    /// Starts flushing every `flushInterval`.
    func start() {
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.schedule(deadline: .now() + flushInterval, repeating: flushInterval)
    }

    /// Stops the timer and flushes what is left. Plays going on are flushed as shown until now
    /// (`end` them first when their carousels stop).
    func stop() {
        timer.cancel()
        flush()
    }

    // MARK: Counting

    /// A state `carousel` (serial) published: a new play for each audience whose current banner
    /// changed; the play of an audience the state no longer has ends (its screens now see the
    /// state of no audience, which plays on).
    func observe(_ state: Carousel, carousel: Int64) {
        let began = counts.withLock { counts in
            // Screens of no audience see the state itself (holding until its own next change).
            var began =
                Self.observe(state, audience: nil, until: state.ownNextChangeAt, carousel: carousel, in: &counts)
                ? 1 : 0
            for (audience, seen) in state.audienceStates
            where Self.observe(seen, audience: audience, until: seen.nextChangeAt, carousel: carousel, in: &counts) {
                began += 1
            }
            let named = state.audienceStates
            let known = counts.audiences[carousel] ?? []
            guard known.count != named.count || !known.allSatisfy({ named[$0] != nil }) else { return began }
            for audience in known where named[audience] == nil {
                let dropped = counts.current.removeValue(forKey: PlayingFor(carousel: carousel, audience: audience))
                if let dropped { counts.ended.append(Self.ending(dropped.record, at: state.changedAt)) }
            }
            counts.audiences[carousel] = named.isEmpty ? nil : Array(named.keys)
            return began
        }
        if began > 0 { metrics.played(began) }
    }

    /// `state`, which the screens of `audience` see until `until`, in `plays`: true when a play
    /// began that follows another seen here (a first one may have begun in another process).
    private static func observe(
        _ state: Carousel, audience: String?, until: Timestamp?, carousel: Int64, in counts: inout Counts
    ) -> Bool {
        let banner = state.currentBanner?.id
        let key = PlayingFor(carousel: carousel, audience: audience)
        let previous = counts.current[key]
        if var previous, previous.record.banner == banner {
            previous.until = until
            counts.current[key] = previous
            return false
        }
        if let previous { counts.ended.append(ending(previous.record, at: state.changedAt)) }
        counts.current[key] = banner.map { banner in
            CurrentPlay(
                record: PlayRecord(
                    carousel: carousel, audience: audience, banner: banner, startedAt: state.changedAt, shown: .zero),
                until: until, checked: previous != nil)
        }
        return banner != nil && previous != nil
    }

    /// `carousel` (serial) is no longer served here: its plays end for this process at `time`.
    func end(carousel: Int64, at time: Timestamp) {
        counts.withLock { counts in
            let audiences = [nil] + (counts.audiences.removeValue(forKey: carousel) ?? [])
            for audience in audiences {
                let play = counts.current.removeValue(forKey: PlayingFor(carousel: carousel, audience: audience))
                if let play { counts.ended.append(Self.ending(play.record, at: time)) }
            }
        }
    }

    /// Views screens of `audience` reported: one each, in the quarter hour of its time; one with an
    /// id only if the store does not know its id yet (the metric counts what was reported).
    public func countViews(_ views: [ReportedView], carousel: Int64, audience: String?) {
        _ = count(views, carousel: carousel, audience: audience)
    }

    /// `countViews`, returning once the store has them: a view acknowledged then survives a crash
    /// (docs/STATS.md). Requests that wait together are written by one flush (a group commit):
    /// each flush takes everything counted before it. Throws when the store refuses the write;
    /// the views stay counted in memory for a later flush, and a screen sending them again with
    /// their ids does not count them twice.
    public func storeViews(_ views: [ReportedView], carousel: Int64, audience: String?) throws(StoreError) {
        let generation = count(views, carousel: carousel, audience: audience)
        try flushing.withLock { state throws(StoreError) in
            guard state.stored < generation else { return }  // a flush that began after them wrote them
            try flush(in: &state)
        }
    }

    /// Counts `views`; the generation of the flush that will take them.
    private func count(_ views: [ReportedView], carousel: Int64, audience: String?) -> UInt64 {
        metrics.viewed(views.count)
        let now = clock()
        return counts.withLock { counts in
            for view in views {
                let quarter = EngagementCount.quarter(of: view.at)
                if let id = view.id {
                    let identified = IdentifiedView(
                        carousel: carousel, id: id, audience: audience, banner: view.banner, quarter: quarter,
                        reportedAt: now)
                    if counts.identified[identified.key] == nil { counts.identified[identified.key] = identified }
                } else {
                    let key = EngagementCount.Key(
                        carousel: carousel, audience: audience, banner: view.banner, quarter: quarter)
                    counts.engagement[key, default: (0, 0)].views += 1
                }
            }
            return counts.generation
        }
    }

    public func countClick(banner: String, carousel: Int64, audience: String?, at time: Timestamp) {
        metrics.clicked()
        let key = EngagementCount.Key(carousel: carousel, audience: audience, banner: banner, at: time)
        counts.withLock { $0.engagement[key, default: (0, 0)].clicks += 1 }
    }

    private static func ending(_ play: PlayRecord, at time: Timestamp) -> PlayRecord {
        var ended = play
        ended.shown = max(.zero, time - play.startedAt)
        return ended
    }

    // MARK: Flushing

    /// What the store has of carousel `serial`'s screens of `audience` over `from..<to`, this
    /// process's counts included.
    public func records(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try flushOrThrow()
        return try store.stats(of: serial, audience: audience, from: from, to: to)
    }

    /// Hands what was counted to the store; on failure keeps it for the next flush and logs it
    /// (once while the store stays down).
    func flush() {
        _ = try? flushOrThrow()
    }

    private func flushOrThrow() throws(StoreError) {
        try flushing.withLock { state throws(StoreError) in try flush(in: &state) }
    }

    /// One flush, `flushing` held.
    private func flush(in state: inout FlushState) throws(StoreError) {
        checkPlaysFoundGoingOn()
        let now = clock()
        let (batch, generation) = counts.withLock { counts in
            defer {
                counts.ended = []
                counts.engagement = [:]
                counts.identified = [:]
                counts.generation += 1
            }
            let going = counts.current.values.filter(\.checked).map { play in
                Self.ending(play.record, at: play.until.map { min($0, now) } ?? now)
            }
            let batch = StatsBatch(
                plays: counts.ended + going,
                engagement: counts.engagement.map { key, count in
                    EngagementCount(key, views: count.views, clicks: count.clicks)
                }, identifiedViews: Array(counts.identified.values),
                forgetReportsBefore: now - IdentifiedView.reportRetention)
            return (batch, counts.generation)
        }
        do throws(StoreError) {
            try store.record(batch)
            state.stored = generation
            if state.failing { logger.info("stats stored again in the \(store.description)") }
            state.failing = false
        } catch {
            putBack(batch)
            if !state.failing {
                logger.warning(
                    "cannot store play, view and click counts: \(error); they are kept in memory and stored "
                        + "once the store takes writes again (a stop before then loses them)")
            }
            state.failing = true
            throw error
        }
    }

    /// Plays found going on: each goes on the store's last play of its carousel when that is the
    /// same banner's and was still being shown when the state began (the same showing, seen by
    /// another process, or by this one before a restart); else it begins when the state did.
    private func checkPlaysFoundGoingOn() {
        let unchecked = counts.withLock { $0.current.values.filter { !$0.checked }.map(\.record) }
        for play in unchecked {
            let last: PlayRecord?
            do {
                last = try store.lastPlay(of: play.carousel, audience: play.audience)
            } catch {
                continue  // asked again at the next flush
            }
            let continued =
                last.map {
                    $0.banner == play.banner && $0.startedAt <= play.startedAt && $0.lastShownAt >= play.startedAt
                }
                ?? false
            counts.withLock { counts in
                let key = PlayingFor(carousel: play.carousel, audience: play.audience)
                guard var current = counts.current[key], current.record == play else { return }
                if continued, let last { current.record.startedAt = last.startedAt }
                current.checked = true
                counts.current[key] = current
            }
        }
    }

    /// A batch the store refused, back into the counts (plays going on are reported afresh).
    private func putBack(_ batch: StatsBatch) {
        counts.withLock { counts in
            let going = Set(counts.current.values.map(\.record.key))
            counts.ended += batch.plays.filter { !going.contains($0.key) }
            for count in batch.engagement {
                counts.engagement[count.key, default: (0, 0)].views += count.views
                counts.engagement[count.key, default: (0, 0)].clicks += count.clicks
            }
            for view in batch.identifiedViews where counts.identified[view.key] == nil {
                counts.identified[view.key] = view
            }
        }
    }
}
