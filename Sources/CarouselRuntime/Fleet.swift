import Carousel
import Dispatch
import Logging
import Metrics
import Store
import Threading
import TimeZones

/// How the fleet keeps and judges screens (docs/SCREENS.md, "The fleet"; docs/CONFIGURATION.md).
public struct FleetSettings: Sendable, Equatable {
    /// A screen not heard from for longer is offline.
    public var screenTimeout: Duration
    /// Screens per carousel: a new one past it is not tracked, unless an offline screen makes
    /// room; known ones go on.
    public var maxScreens: Int
    /// How far a flip may be from the carousel's change, either side, and still be in step.
    public var stepTolerance: Duration
    /// An offline screen is forgotten after this long.
    public var screenRetention: Duration

    public init(
        screenTimeout: Duration = .seconds(30), maxScreens: Int = 10_000, stepTolerance: Duration = .milliseconds(50),
        screenRetention: Duration = .seconds(30 * 86_400)
    ) {
        self.screenTimeout = screenTimeout
        self.maxScreens = maxScreens
        self.stepTolerance = stepTolerance
        self.screenRetention = screenRetention
    }

    /// How often what this process heard is written, and every screen read back and judged: each
    /// screen is written at most this often, and every process lists it within two of these.
    public static let tick: Duration = .seconds(1)
    /// Flips not reported yet within this are not missing yet: screens send receipts in batches at
    /// least every 5 s, and a receipt reaches other processes a tick or two after it arrives.
    static let frozenGrace: Duration = .seconds(8)
    /// How far past now a judging walks each carousel's changes, to know when its screens will be
    /// frozen and judge them again only then: the longer, the longer each walk and the rarer a
    /// still carousel's screens are judged again.
    static let frozenLookahead: Duration = .seconds(60)
    /// How often screens past their retention are looked for.
    static let forgetEvery: Duration = .seconds(60)
    /// How far from now a receipt's instant may be.
    public static let receiptHorizon: Duration = .seconds(3600)
    /// Receipts in one report.
    public static let maxReceipts = 100
}

/// A screen as the API lists it: its row, its carousel's name, and its state since when.
public struct ScreenEntry: Sendable, Equatable {
    public let record: ScreenRecord
    public let carousel: String
    public let state: ScreenState
    public let since: Timestamp

    /// Offline and out-of-step first (what needs an operator), then by carousel and id.
    static func listedBefore(_ a: ScreenEntry, _ b: ScreenEntry) -> Bool {
        let (onlineA, onlineB) = (a.state == .online, b.state == .online)
        if onlineA != onlineB { return onlineB }
        if a.carousel != b.carousel { return a.carousel < b.carousel }
        return a.record.id.rawValue < b.record.id.rawValue
    }

    /// `entries` in the order `listedBefore` lists them, sorted by their positions: moving each
    /// entry (a row of strings) at every step of the sort was most of its cost.
    static func listed(_ entries: [ScreenEntry]) -> [ScreenEntry] {
        entries.indices.sorted { listedBefore(entries[$0], entries[$1]) }.map { entries[$0] }
    }
}

/// A receipt as a screen sends it (docs/SCREENS.md, receipts), its JSON types checked.
public struct ReportedReceipt: Sendable, Equatable {
    public let banner: String
    public let version: UInt64
    public let shownAt: Timestamp
    public let offsetMs: Int64?
    public let rttMs: Int64?

    public init(banner: String, version: UInt64, shownAt: Timestamp, offsetMs: Int64?, rttMs: Int64?) {
        self.banner = banner
        self.version = version
        self.shownAt = shownAt
        self.offsetMs = offsetMs
        self.rttMs = rttMs
    }
}

/// Why the fleet did not take what a screen sent; nothing of it was kept.
public enum ScreenRefusal: Error, Equatable {
    /// The carousel has `limit` screens already, all online, and this one is new.
    case full(carousel: String, limit: Int)
    /// Another key claimed this screen (docs/SCREENS.md, "A screen's own reports").
    case claimed(carousel: String, screen: ScreenID)
    /// A receipt cannot be true; `field` is its path in the report (`receipts[2].banner`).
    case invalidReceipt(field: String, detail: String)
}

/// The screens of every carousel (docs/SCREENS.md, "The fleet"): what this process hears
/// (requests, event streams held, receipts judged against each carousel's history) is merged in
/// memory and written to the store once a tick; then every screen the store has, whichever process
/// heard it, is read back and judged. Transitions go to observers (`GET /screens/events`).
public final class Fleet<Outlets: CarouselOutlets>: Sendable {
    public typealias Live = LiveCarousel<Outlets.Outlet>

    public let settings: FleetSettings
    private let directory: CarouselDirectory<Outlets>
    private let store: any CarouselStore
    private let logger: Logger
    private let clock: @Sendable () -> Timestamp
    private let state = Lock(FleetState())
    /// Held for a whole tick: one at a time, so that what a failed write puts back is never
    /// overtaken by a later one.
    private let ticking: Lock<TickState>
    /// Dispatch sources are thread-safe; the `DispatchSourceTimer` protocol just is not Sendable.
    nonisolated(unsafe) private let timer: DispatchSourceTimer

    init(
        directory: CarouselDirectory<Outlets>, store: any CarouselStore, settings: FleetSettings, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        self.directory = directory
        self.store = store
        self.settings = settings
        self.logger = logger
        self.clock = clock
        ticking = Lock(TickState(shares: max(1, Int(settings.screenTimeout / 3 / FleetSettings.tick))))
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "carousel.fleet"))
        timer.schedule(deadline: .distantFuture)
        // Resumed at once, unarmed: Dispatch aborts when a source is released while suspended.
        timer.resume()
    }

    // MARK: Hearing screens

    /// A request from screen `id` of `live`, a screen of `audience` (a poll, or a report), sent
    /// with `screenKey` (nil: none).
    public func hear(_ id: ScreenID, on live: Live, userAgent: String?, audience: String?, screenKey: ScreenKey? = nil)
        throws(ScreenRefusal)
    {
        let key = ScreenRecord.Key(carousel: live.key.serial, id: id)
        let now = clock()
        try state.withLock { state throws(ScreenRefusal) in
            try admit(key, of: live.name, with: screenKey, at: now, in: &state)
            let via: ScreenVia = state.streams[key] == nil ? .poll : .stream
            Self.note(
                ScreenSighting(
                    key: key, heardAt: now, via: via, userAgent: userAgent ?? "", audience: audience, receipt: nil,
                    claim: screenKey),
                in: &state)
        }
    }

    /// Screen `id` of `live`, a screen of `audience`, opened an event stream with `screenKey`: it
    /// is heard all the while it is held (every third of the timeout), until `release`.
    public func hold(
        _ id: ScreenID, on live: Live, userAgent: String?, audience: String?, screenKey: ScreenKey? = nil
    ) throws(ScreenRefusal) -> ScreenRecord.Key {
        let key = ScreenRecord.Key(carousel: live.key.serial, id: id)
        let now = clock()
        try state.withLock { state throws(ScreenRefusal) in
            try admit(key, of: live.name, with: screenKey, at: now, in: &state)
            var hold = state.streams[key] ?? StreamHold(count: 0, userAgent: "")
            hold.count += 1
            hold.userAgent = userAgent ?? ""
            hold.audience = audience
            hold.claim = hold.claim ?? screenKey
            state.streams[key] = hold
            Self.note(
                ScreenSighting(
                    key: key, heardAt: now, via: .stream, userAgent: userAgent ?? "", audience: audience, receipt: nil,
                    claim: screenKey),
                in: &state)
        }
        return key
    }

    /// A stream `hold` returned `key` for has ended: last heard now.
    public func release(_ key: ScreenRecord.Key) {
        let now = clock()
        state.withLock { state in
            guard let hold = state.streams[key] else { return }
            if hold.count > 1 { state.streams[key]?.count -= 1 } else { state.streams[key] = nil }
            Self.note(hold.sighting(of: key, at: now), in: &state)
        }
    }

    /// Receipts from screen `id` of `live`, a screen of `audience` (docs/AUDIENCES.md): each
    /// checked (banner known, version not from the future, instant within an hour of now) before
    /// any is kept, then judged against what the carousel showed that audience; the latest is the
    /// screen's.
    public func report(
        _ receipts: [ReportedReceipt], from id: ScreenID, on live: Live, userAgent: String?, audience: String? = nil,
        screenKey: ScreenKey? = nil
    ) throws(ScreenRefusal) {
        let now = clock()
        let snapshot = live.engine.snapshot.state(for: audience)
        for (index, receipt) in receipts.enumerated() {
            let field = "receipts[\(index)]"
            if receipt.version > snapshot.version {
                throw .invalidReceipt(
                    field: "\(field).version",
                    detail: "version \(receipt.version) is after the carousel's current \(snapshot.version)")
            }
            let distance = receipt.shownAt > now ? receipt.shownAt - now : now - receipt.shownAt
            if distance > FleetSettings.receiptHorizon {
                throw .invalidReceipt(
                    field: "\(field).shownAt",
                    detail: "\(receipt.shownAt.rfc3339) is more than an hour from the service's clock "
                        + "(\(now.rfc3339)); estimate the offset with GET /time")
            }
            if !live.knows(banner: receipt.banner, at: receipt.shownAt, audience: audience) {
                throw .invalidReceipt(
                    field: "\(field).banner", detail: "carousel '\(live.name)' has no banner '\(receipt.banner)'")
            }
        }
        let key = ScreenRecord.Key(carousel: live.key.serial, id: id)
        let judged = receipts.map { receipt in
            let verdict = live.check(
                Receipt(banner: receipt.banner, version: receipt.version, shownAt: receipt.shownAt),
                tolerance: settings.stepTolerance, audience: audience)
            return JudgedReceipt(
                banner: receipt.banner, version: receipt.version, shownAt: receipt.shownAt, lateness: verdict.lateness,
                outOfStep: verdict.outOfStep, verdictSince: now, offsetMs: receipt.offsetMs, rttMs: receipt.rttMs)
        }
        try state.withLock { state throws(ScreenRefusal) in
            try admit(key, of: live.name, with: screenKey, at: now, in: &state)
            // A screen sends its receipts in the order it flipped and sends again what it is not
            // sure arrived (a batch whose answer was lost, receipts queued offline): one for an
            // instant no later than the screen's latest is a repeat, and is not measured twice.
            var latest = [state.pending[key]?.receipt?.shownAt, state.entries[key]?.entry.record.receipt?.shownAt]
                .compactMap { $0 }.max()
            for receipt in judged where latest.map({ receipt.shownAt > $0 }) ?? true {
                if let lateness = receipt.lateness { state.lateness.observe(abs(lateness.seconds)) }
                latest = receipt.shownAt
            }
            let via: ScreenVia = state.streams[key] == nil ? .poll : .stream
            Self.note(
                ScreenSighting(
                    key: key, heardAt: now, via: via, userAgent: userAgent ?? "", audience: audience,
                    receipt: judged.max { $0.shownAt < $1.shownAt }, claim: screenKey), in: &state)
        }
    }

    /// Refuses what is sent without the key that claimed the screen, and a new screen past
    /// `maxScreens` when no offline screen can make room; remembers a new one otherwise.
    private func admit(
        _ key: ScreenRecord.Key, of carousel: String, with screenKey: ScreenKey?, at now: Timestamp,
        in state: inout FleetState
    ) throws(ScreenRefusal) {
        if state.known[key.carousel]?.contains(key.id) == true {
            let claim =
                state.pending[key]?.claim ?? state.streams[key]?.claim ?? state.entries[key]?.entry.record.claim
            guard ScreenKey.admits(screenKey, to: claim) else { throw .claimed(carousel: carousel, screen: key.id) }
            return
        }
        if (state.known[key.carousel]?.count ?? 0) >= settings.maxScreens {
            guard let room = Self.room(in: key.carousel, at: now, timeout: settings.screenTimeout, &state) else {
                throw .full(carousel: carousel, limit: settings.maxScreens)
            }
            state.entries[room] = nil
            state.known[key.carousel]?.remove(room.id)
            state.madeRoom.insert(room)
        }
        state.madeRoom.remove(key)
        state.known[key.carousel, default: []].insert(key.id)
    }

    /// The screen of `carousel` heard from longest ago, if it is offline still and nothing of it
    /// waits here: the one that makes room for a new screen past `maxScreens`. A ghost (an id made
    /// up by a stranger) is offline a timeout after it was last heard; it must not keep a real
    /// screen out for the 30 days it would be kept otherwise.
    private static func room(in carousel: Int64, at now: Timestamp, timeout: Duration, _ state: inout FleetState)
        -> ScreenRecord.Key?
    {
        while let candidate = state.makingRoom[carousel]?.popLast() {
            guard let judged = state.entries[candidate], state.pending[candidate] == nil,
                state.streams[candidate] == nil,
                !ScreenState.isHeard(lastSeen: judged.entry.record.lastSeen, now: now, timeout: timeout)
            else { continue }
            return candidate
        }
        return nil
    }

    /// Forgets screen `id` of `live` at the word of the one `attribution` names (the audit log
    /// says so), its claim with it: the next key it is heard with claims it again. False when the
    /// fleet does not know it.
    public func forget(_ id: ScreenID, of live: Live, by attribution: Attribution) throws(StoreError) -> Bool {
        let key = ScreenRecord.Key(carousel: live.key.serial, id: id)
        // Between ticks: what a tick has taken to write cannot bring the row back after it is gone.
        return try ticking.withLock { ticking throws(StoreError) in
            guard state.withLock({ $0.known[key.carousel]?.contains(id) == true }) else { return false }
            try store.forgetScreens(
                [key], audit: [AuditEntry(.forgetScreen, attribution, carousel: live.name, target: id.rawValue)])
            ticking.forgetRows([key])
            state.withLock { state in
                state.pending[key] = nil
                state.entries[key] = nil
                Self.forget([key], in: &state)
            }
            return true
        }
    }

    /// Merges `sighting` into what is pending for its screen: the latest presence, the latest
    /// receipt, and the first arrival of the latest receipt's verdict.
    private static func note(_ sighting: ScreenSighting, in state: inout FleetState) {
        if state.pending[sighting.key] == nil {
            state.pending[sighting.key] = sighting
        } else {
            state.pending[sighting.key]!.absorb(sighting)
        }
    }

    // MARK: Listing

    /// Every screen of carousel `name` (of every carousel when nil) as last judged, offline and
    /// out-of-step first.
    public func entries(of name: String? = nil) -> [ScreenEntry] {
        let all = state.withLock { $0.entries.values.map(\.entry) }
        return ScreenEntry.listed(all.filter { name == nil || $0.carousel == name })
    }

    /// Calls `handler`, on the fleet's thread, with each screen that appeared or changed state.
    public func observe(_ handler: @escaping @Sendable (ScreenEntry) -> Void) {
        state.withLock { $0.observers.append(handler) }
    }

    /// Calls `handler`, on the fleet's thread, with the screens that changed state at a judging
    /// (the ones `banner_screen_transitions_total` counts), all at once: what webhooks are told
    /// (docs/WEBHOOKS.md).
    public func observeTransitions(_ handler: @escaping @Sendable ([ScreenEntry]) -> Void) {
        state.withLock { $0.transitionObservers.append(handler) }
    }

    // MARK: Ticks

    /// Starts writing and judging every tick.
    func start() {
        let period = DispatchTimeInterval.nanoseconds(Int(FleetSettings.tick.nanoseconds))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.schedule(deadline: .now() + period, repeating: period)
    }

    /// Stops the timer and writes what is left: the streams held end with the process.
    func stop() {
        timer.cancel()
        let now = clock()
        state.withLock { state in
            for (key, hold) in state.streams {
                Self.note(hold.sighting(of: key, at: now), in: &state)
            }
            state.streams = [:]
        }
        ticking.withLock { ticking in
            let (heard, new) = write(at: now, &ticking)
            guard ticking.mirrorsStore else { return }
            state.withLock { state in
                _ = Self.apply(
                    .written(heard, forgottenBefore: nil), to: &state, carousels: directory.bySerial,
                    timeout: settings.screenTimeout, now: now)
            }
            keepRows(new: new, &ticking, everything: true)
        }
    }

    /// Writes what was heard, forgets screens past their retention now and then, and judges
    /// every stored screen: read back from a store other processes write too, else as this
    /// process wrote it (after a first read, the rows are what it wrote).
    func tick() {
        ticking.withLock { ticking in
            let now = clock()
            makeRoom(&ticking)
            let (written, new) = write(at: now, &ticking)
            var forgottenBefore: Timestamp?
            if ticking.lastForget.map({ now - $0 >= FleetSettings.forgetEvery }) ?? true {
                ticking.lastForget = now
                let cutoff = now - settings.screenRetention
                do throws(StoreError) {
                    let forgotten = try store.forgetScreens(silentSince: cutoff)
                    forgottenBefore = cutoff
                    if forgotten > 0 {
                        logger.info(
                            "forgot \(forgotten) screen\(forgotten == 1 ? "" : "s") silent for over \(settings.screenRetention.seconds) s"
                        )
                    }
                } catch {
                    failed("forgetting old screens", error, &ticking)
                }
            }
            let change: RowChange
            if ticking.mirrorsStore {
                change = .written(written, forgottenBefore: forgottenBefore)
            } else {
                do throws(StoreError) { change = .all(try store.screens()) } catch {
                    failed("reading screens", error, &ticking)
                    return
                }
                ticking.mirrorsStore = !store.isShared
            }
            judge(change, at: now, countTransitions: ticking.judgedOnce)
            ticking.judgedOnce = true
            if ticking.mirrorsStore { keepRows(new: new, &ticking) }
        }
    }

    /// Takes what is pending; on a store other processes read too, writes it (`saveScreens`),
    /// else notes whose rows to write (`keepRows`, after the judging). Returns what was heard, for
    /// the rows this process lists, and (on a store no other process reads) the screens whose rows
    /// are new; when a shared store's
    /// write fails, nothing (it waits for the next tick, and the list stays as last read).
    private func write(at now: Timestamp, _ ticking: inout TickState) -> (
        heard: [ScreenSighting], new: [ScreenRecord.Key]
    ) {
        let mirrored = ticking.mirrorsStore
        let (batch, new) = state.withLock { state -> ([ScreenSighting], [ScreenRecord.Key]) in
            // Streams held are heard every third of the timeout: well before it runs out.
            if state.streamsHeardAt.map({ now - $0 >= settings.screenTimeout / 3 }) ?? true {
                state.streamsHeardAt = now
                for (key, hold) in state.streams {
                    Self.note(hold.sighting(of: key, at: now), in: &state)
                }
            }
            defer { state.pending = [:] }
            let batch = Array(state.pending.values)
            guard mirrored else { return (batch, []) }
            let entries = state.entries
            return (batch, batch.map(\.key).filter { entries[$0] == nil })
        }
        if mirrored {
            for sighting in batch { ticking.held[ticking.share(of: sighting.key)].insert(sighting.key) }
            return (batch, new)
        }
        do throws(StoreError) {
            try store.saveScreens(batch, timeout: settings.screenTimeout)
            wrote(&ticking)
            return (batch, new)
        } catch {
            // Kept for the next tick, under what was heard meanwhile.
            state.withLock { state in
                for sighting in batch {
                    let newer = state.pending[sighting.key]
                    state.pending[sighting.key] = sighting
                    if let newer { Self.note(newer, in: &state) }
                }
            }
            failed("writing \(batch.count) screen\(batch.count == 1 ? "" : "s")", error, &ticking)
            return ([], [])
        }
    }

    /// On a store no other process reads, writes whole, as the judging left them, the rows of the
    /// new screens and of the next share (`everything`: of every screen heard since its last write,
    /// when stopping). When the store fails they wait, listed all the same.
    private func keepRows(new: [ScreenRecord.Key], _ ticking: inout TickState, everything: Bool = false) {
        let next = ticking.nextShare
        let keys =
            everything
            ? ticking.held.flatMap { $0 } : Array(ticking.held[next]) + new.filter { ticking.share(of: $0) != next }
        if !keys.isEmpty {
            let rows = state.withLock { state in keys.compactMap { state.entries[$0]?.entry.record } }
            do throws(StoreError) {
                try store.keepScreens(rows)
            } catch {
                failed(
                    "writing \(rows.count) screen\(rows.count == 1 ? "" : "s")", error, &ticking,
                    meanwhile: "screens are listed as heard, and written when the store is back")
                return
            }
            wrote(&ticking)
        }
        if everything {
            ticking.held = Array(repeating: [], count: ticking.held.count)
        } else {
            ticking.held[next] = []
            for key in new { ticking.held[ticking.share(of: key)].remove(key) }
            ticking.nextShare = (next + 1) % ticking.held.count
        }
    }

    /// Deletes the rows of the screens that made room for new ones (kept for the next tick when
    /// the store fails), before what was heard is written: a screen heard again since is new.
    private func makeRoom(_ ticking: inout TickState) {
        let gone = state.withLock { state in
            defer { state.madeRoom = [] }
            return Array(state.madeRoom)
        }
        guard !gone.isEmpty else { return }
        do throws(StoreError) {
            try store.forgetScreens(gone, audit: [])
            ticking.forgetRows(gone)
        } catch {
            state.withLock { state in
                for key in gone where state.known[key.carousel]?.contains(key.id) != true {
                    state.madeRoom.insert(key)
                }
            }
            failed("forgetting \(gone.count) screens that made room for new ones", error, &ticking)
        }
    }

    /// A write went through: said once after a store that failed is back.
    private func wrote(_ ticking: inout TickState) {
        guard ticking.failing else { return }
        ticking.failing = false
        logger.notice("screens are written to \(store.description) again")
    }

    private func failed(
        _ what: String, _ error: StoreError, _ ticking: inout TickState,
        meanwhile: String = "screens are listed as last known until the store is back"
    ) {
        guard !ticking.failing else { return }
        ticking.failing = true
        logger.error("\(what) failed: \(error); \(meanwhile)")
    }

    /// Brings every entry's row up to date, then judges in place each screen of a carousel served
    /// here that may have changed state: its row is new or changed, its `recheckAt` has come, or
    /// its carousel's history moved (or the carousels served changed: every screen then). Tells
    /// observers of screens that appeared or changed state. The first judging's are not counted as
    /// transitions: a process starting has seen no change, only screens it did not know of.
    private func judge(_ change: RowChange, at now: Timestamp, countTransitions: Bool) {
        // No screen known and none heard: nothing to judge (a service of many carousels and no
        // screens must not walk them every second).
        if change.isEmpty, state.withLock({ $0.entries.isEmpty }) { return }
        let carousels = directory.bySerial
        // Read before the walks below: a history that moves meanwhile is seen moved at the next tick.
        let generations = carousels.mapValues(\.historyGeneration)
        let timeout = settings.screenTimeout
        func heard(_ row: ScreenRecord) -> Bool {
            ScreenState.isHeard(lastSeen: row.lastSeen, now: now, timeout: timeout)
        }
        // Frozen matters only for a screen heard from whose latest receipt is in step.
        func mayFreeze(_ row: ScreenRecord) -> Timestamp? {
            guard heard(row), let receipt = row.receipt, receipt.outOfStep == nil else { return nil }
            return receipt.shownAt
        }
        let grace = FleetSettings.frozenGrace
        // One hold of the lock from the rows put in to their judging: a new screen's entry is
        // `.offline` until judged, and `GET /screens` must never list it so (a listing between
        // the two once showed a screen just heard as offline).
        let (changed, observers) = state.withLock { state in
            let appeared = Self.apply(change, to: &state, carousels: carousels, timeout: timeout, now: now)
            let everyScreen = Set(generations.keys) != Set(state.historyGenerations.keys)
            let moved = Set(generations.filter { state.historyGenerations[$0.key] != $0.value }.keys)
            state.historyGenerations = generations
            var due: [Dictionary<ScreenRecord.Key, Judged>.Index] = []
            for index in state.entries.indices {
                // Two fields read, not the whole entry copied: this walk passes every screen.
                if everyScreen || state.entries.values[index].recheckAt <= now
                    || (!moved.isEmpty && moved.contains(state.entries.values[index].entry.record.carousel))
                {
                    due.append(index)
                }
            }
            // One walk over the changes of each carousel's audience tells every such screen whether
            // it is frozen, and from when (docs/AUDIENCES.md).
            var earliest: [Viewers: Timestamp] = [:]
            for index in due {
                let row = state.entries.values[index].entry.record
                guard let shownAt = mayFreeze(row) else { continue }
                let viewers = Viewers(carousel: row.carousel, audience: row.audience)
                earliest[viewers] = min(earliest[viewers] ?? shownAt, shownAt)
            }
            var checks: [Viewers: FrozenCheck] = [:]
            for (viewers, instant) in earliest {
                checks[viewers] = carousels[viewers.carousel]?.frozenCheck(
                    earliest: instant, through: now + FleetSettings.frozenLookahead, grace: grace,
                    audience: viewers.audience)
            }
            var changed: [ScreenEntry] = []
            var gone: [ScreenRecord.Key] = []
            for index in due {
                let entry = state.entries.values[index].entry
                let row = entry.record
                guard let live = carousels[row.carousel] else {
                    gone.append(row.key)
                    continue
                }
                var frozen = false
                // Offline a timeout after it was last heard; offline, nothing but a new row changes it.
                var recheckAt = heard(row) ? row.lastSeen + timeout + .nanoseconds(1) : .distantFuture
                if let shownAt = mayFreeze(row) {
                    switch checks[Viewers(carousel: row.carousel, audience: row.audience)]?.frozenFrom(
                        lastShownAt: shownAt)
                    {
                    case .at(let onset):
                        frozen = onset <= now
                        if !frozen { recheckAt = min(recheckAt, onset) }
                    case .after(let instant):
                        recheckAt = min(recheckAt, instant + .nanoseconds(1))
                    case nil:
                        // Past a walk cut short: asked of the history alone, and again at the next judging.
                        frozen = live.isFrozen(lastShownAt: shownAt, now: now, grace: grace, audience: row.audience)
                        if !frozen { recheckAt = now }
                    }
                }
                state.entries.values[index].recheckAt = recheckAt
                let judged = ScreenState.of(
                    lastSeen: row.lastSeen, now: now, timeout: timeout, outOfStep: row.receipt?.outOfStep,
                    frozen: frozen)
                let before = appeared.isEmpty || !appeared.contains(row.key) ? entry : nil
                let judgedSince = since(judged, of: row, before: before, now: now)
                // Most screens are as they were: their entry is left as it is, not written again.
                guard before == nil || judged != entry.state || judgedSince != entry.since else { continue }
                let now = ScreenEntry(record: row, carousel: entry.carousel, state: judged, since: judgedSince)
                state.entries.values[index].entry = now
                if before?.state != judged { changed.append(now) }
            }
            for key in gone { state.entries[key] = nil }
            Self.forget(gone, in: &state)
            Self.listRoom(in: &state, limit: settings.maxScreens)
            if countTransitions {
                for entry in changed { state.transitions[entry.state.name, default: 0] += 1 }
            }
            return (changed, state.observers)
        }
        let sorted = ScreenEntry.listed(changed)
        for entry in sorted {
            for observer in observers { observer(entry) }
        }
        if countTransitions, !sorted.isEmpty {
            for observer in state.withLock({ $0.transitionObservers }) { observer(sorted) }
        }
    }

    /// Puts `change` into the entries, each due to be judged, a new one in the state `.offline`
    /// until then; returns the screens that appeared.
    private static func apply(
        _ change: RowChange, to state: inout FleetState, carousels: [Int64: Live], timeout: Duration, now: Timestamp
    ) -> Set<ScreenRecord.Key> {
        var appeared: Set<ScreenRecord.Key> = []
        func entry(_ row: ScreenRecord, of live: Live) -> Judged {
            if let before = state.entries[row.key]?.entry {
                return .due(
                    ScreenEntry(record: row, carousel: before.carousel, state: before.state, since: before.since))
            }
            appeared.insert(row.key)
            return .due(ScreenEntry(record: row, carousel: live.name, state: .offline, since: now))
        }
        switch change {
        case .all(let rows):
            var entries: [ScreenRecord.Key: Judged] = [:]
            entries.reserveCapacity(rows.count)
            for row in rows {
                guard let live = carousels[row.carousel] else { continue }
                entries[row.key] = entry(row, of: live)
            }
            state.entries = entries
            // What maxScreens counts: stored, and heard here but not written yet.
            var known: [Int64: Set<ScreenID>] = [:]
            for key in entries.keys { known[key.carousel, default: []].insert(key.id) }
            for key in state.pending.keys { known[key.carousel, default: []].insert(key.id) }
            for key in state.streams.keys { known[key.carousel, default: []].insert(key.id) }
            state.known = known
        case .written(let sightings, let forgottenBefore):
            // Every screen written was known already (`admit`).
            for sighting in sightings {
                // The store drops a sighting of a carousel it no longer has.
                guard let live = carousels[sighting.key.carousel] else { continue }
                let row = sighting.merged(into: state.entries[sighting.key]?.entry.record, timeout: timeout)
                state.entries[sighting.key] = entry(row, of: live)
            }
            if let forgottenBefore {
                let forgotten = state.entries.values.filter { $0.entry.record.lastSeen < forgottenBefore }
                    .map(\.entry.record.key)
                for key in forgotten { state.entries[key] = nil }
                forget(forgotten, in: &state)
            }
        }
        return appeared
    }

    /// Lists, for each carousel at `maxScreens`, its offline screens, the longest unheard last:
    /// who makes room for the next new screens (`room`).
    private static func listRoom(in state: inout FleetState, limit: Int) {
        state.makingRoom = [:]
        let full = Set(state.known.filter { $0.value.count >= limit }.keys)
        guard !full.isEmpty else { return }
        var offline: [Int64: [ScreenRecord]] = [:]
        for judged in state.entries.values where judged.entry.state == .offline {
            let row = judged.entry.record
            if full.contains(row.carousel) { offline[row.carousel, default: []].append(row) }
        }
        for (carousel, rows) in offline {
            state.makingRoom[carousel] = rows.sorted { $0.lastSeen > $1.lastSeen }.map(\.key)
        }
    }

    /// Screens no longer stored no longer count against `maxScreens`, unless heard here since.
    private static func forget(_ keys: [ScreenRecord.Key], in state: inout FleetState) {
        for key in keys where state.pending[key] == nil && state.streams[key] == nil {
            state.known[key.carousel]?.remove(key.id)
        }
    }

    /// Since when a screen is in `state`: what the rows say where they can (every process agrees),
    /// else when this process first judged it so.
    private func since(_ state: ScreenState, of row: ScreenRecord, before: ScreenEntry?, now: Timestamp) -> Timestamp {
        let verdictSince = max(row.heardSince, row.receipt?.verdictSince ?? row.heardSince)
        switch state {
        case .offline:
            return row.lastSeen + settings.screenTimeout
        case .outOfStep(.frozen):
            return before?.state == state ? before!.since : now
        case .outOfStep:
            return verdictSince
        case .online:
            if let before, before.state == .online { return before.since }
            return before?.state == .outOfStep(.frozen) ? now : verdictSince
        }
    }

    // MARK: Metrics

    /// `banner_screens`, `banner_screen_lateness_seconds`, `banner_screen_transitions_total`
    /// (docs/METRICS.md).
    public func writeMetrics(to text: inout String) {
        let (entries, lateness, transitions) = state.withLock { ($0.entries, $0.lateness, $0.transitions) }
        var counts: [String: [String: Int]] = [:]
        for carousel in directory.all { counts[carousel.name] = [:] }
        for judged in entries.values {
            counts[judged.entry.carousel, default: [:]][judged.entry.state.name, default: 0] += 1
        }
        text += "# HELP banner_screens Screens by carousel and state, as this process last judged them.\n"
        text += "# TYPE banner_screens gauge\n"
        for (carousel, states) in counts.sorted(by: { $0.key < $1.key }) {
            for name in ["online", "offline", "out-of-step"] {
                text += "banner_screens{carousel=\"\(carousel)\",state=\"\(name)\"} \(states[name] ?? 0)\n"
            }
        }
        text += "# HELP banner_screen_lateness_seconds How far from the carousel's change screens flipped, "
        text += "either side, as the receipts this process took say.\n"
        text += "# TYPE banner_screen_lateness_seconds histogram\n"
        lateness.write("banner_screen_lateness_seconds", labels: "", to: &text)
        text += "# HELP banner_screen_transitions_total Screens that changed state, by the state they went to.\n"
        text += "# TYPE banner_screen_transitions_total counter\n"
        for name in ["online", "offline", "out-of-step"] {
            text += "banner_screen_transitions_total{to=\"\(name)\"} \(transitions[name] ?? 0)\n"
        }
    }
}

// The fleet's own types, outside the generic class: a type nested in `Fleet<Outlets>` is generic
// too, and code not specialised for it copies its values through value witnesses and looks up
// its metadata at run time (a fifth of a tick's instructions once).

private struct FleetState {
    /// Heard since the last write, one sighting per screen.
    var pending: [ScreenRecord.Key: ScreenSighting] = [:]
    /// Event streams held by this process, by screen.
    var streams: [ScreenRecord.Key: StreamHold] = [:]
    var streamsHeardAt: Timestamp?
    /// Every screen as last judged.
    var entries: [ScreenRecord.Key: Judged] = [:]
    /// Each served carousel's history generation at the last judging (`Judged.recheckAt`).
    var historyGenerations: [Int64: UInt64] = [:]
    /// Each carousel's screens, stored or pending: what `maxScreens` counts.
    var known: [Int64: Set<ScreenID>] = [:]
    /// Each carousel's offline screens as last judged, the longest unheard last: who makes room
    /// for a new screen past `maxScreens`.
    var makingRoom: [Int64: [ScreenRecord.Key]] = [:]
    /// Screens that made room, to delete from the store at the next tick.
    var madeRoom: Set<ScreenRecord.Key> = []
    var observers: [@Sendable (ScreenEntry) -> Void] = []
    /// Told of the screens that changed state, all of a judging at once (a start's first judging
    /// is not a change: nothing is told then).
    var transitionObservers: [@Sendable ([ScreenEntry]) -> Void] = []
    var lateness = Histogram(bounds: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10])
    var transitions: [String: UInt64] = [:]
}

/// A screen as last judged, and when it must be judged again though no new row of it comes
/// and its carousel's history does not move: it goes offline, or it is frozen, at that
/// instant at the earliest. A tick judges only the screens due (docs/SCREENS.md, "The fleet"):
/// with 10,000 screens, a judging of each every second was most of the fleet's work.
private struct Judged {
    var entry: ScreenEntry
    var recheckAt: Timestamp

    /// A new or changed row: judged at the next judging.
    static func due(_ entry: ScreenEntry) -> Judged { Judged(entry: entry, recheckAt: .distantPast) }
}

private struct StreamHold {
    var count: Int
    var userAgent: String
    var audience: String?
    var claim: ScreenKey?

    /// The screen heard at `now` through the stream it holds.
    func sighting(of key: ScreenRecord.Key, at now: Timestamp) -> ScreenSighting {
        ScreenSighting(
            key: key, heardAt: now, via: .stream, userAgent: userAgent, audience: audience, receipt: nil,
            claim: claim)
    }
}

/// The screens of one audience (nil: of none) of a carousel (by serial): whom one walk over
/// the changes judges frozen or not.
private struct Viewers: Hashable {
    let carousel: Int64
    let audience: String?
}

private struct TickState {
    var judgedOnce = false
    var lastForget: Timestamp?
    /// Whether the last write or read failed, so that a store that stays down is logged once.
    var failing = false
    /// Whether `FleetState.entries` hold every stored row, on a store no other process writes: a
    /// tick then merges what it wrote into them rather than reading every row back
    /// (docs/SCREENS.md, "The fleet").
    var mirrorsStore = false
    /// On such a store the rows are kept for the next start only: the fleet writes them whole as
    /// it lists them (10,000 screens reporting every 5 s merged 3,000 sightings a second into rows
    /// in SQL, most of the fleet's work). A new screen's row is written at the next tick; a screen
    /// heard since its row was written waits here, in one of as many shares (by the key's hash) as
    /// there are ticks in a third of the timeout, and each tick writes the next share: a screen's
    /// row every 10 s, a tenth of the screens at each tick rather than all of them at once.
    var held: [Set<ScreenRecord.Key>]
    var nextShare = 0

    init(shares: Int) {
        held = Array(repeating: [], count: shares)
    }

    func share(of key: ScreenRecord.Key) -> Int { Int(UInt(bitPattern: key.hashValue) % UInt(held.count)) }

    /// Screens whose rows were deleted: nothing held of them may write them again.
    mutating func forgetRows(_ keys: [ScreenRecord.Key]) {
        for key in keys { held[share(of: key)].remove(key) }
    }
}

/// How the stored rows changed since the last judging.
private enum RowChange {
    /// Every row, as read back.
    case all([ScreenRecord])
    /// What this process wrote, merged by the store's rule, and the rows silent since before
    /// `forgottenBefore` deleted: what a store with no other writer now holds.
    case written([ScreenSighting], forgottenBefore: Timestamp?)

    var isEmpty: Bool {
        switch self {
        case .all(let rows): rows.isEmpty
        case .written(let sightings, _): sightings.isEmpty
        }
    }
}
