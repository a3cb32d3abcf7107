import Carousel
import Definitions
import Digest
import JSON
import Metrics
import Store
import Threading
import TimeZones

/// One carousel being served: its engine (the state), the outlet the engine feeds (`Outlet`: for
/// HTTP, the prepared reads and the event stream), and its definition as last stored. Every change
/// runs in the engine, one at a time, and is written to the store before anyone sees it
/// (docs/STORE.md: write, then publish).
public final class LiveCarousel<Outlet: CarouselOutlet>: Sendable {
    public let key: CarouselKey
    public let engine: CarouselEngine
    public let outlet: Outlet
    /// The store and the serial: neither another store's carousel nor a re-created one of the
    /// same name ever shares it (HTTP makes its ETags of it).
    public let instance: String
    private let store: any CarouselStore
    private let plays: PlayRecorder
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Timestamp
    /// The carousel as this process last read or wrote it in the store. Changed only inside the
    /// engine, so that it moves in step with the state.
    private let known: Lock<StoredCarousel>
    /// What the carousel showed over the last hour at least, to check screens' receipts against.
    private let history: Lock<ShowHistory>
    /// Commands waiting for the next write, and whether a writer is draining them.
    private let waiting = Lock<WaitingCommands>(WaitingCommands())

    private struct WaitingCommands {
        var commands:
            [(CarouselCommand, Requester, CheckedContinuation<Result<Carousel, ChangeError<CarouselError>>, Never>)] =
                []
        var writing = false
    }

    /// `tell` is told of a takeover that ends by itself (docs/WEBHOOKS.md): no write causes it.
    init<Outlets: CarouselOutlets>(
        _ carousel: StoredCarousel, store: any CarouselStore, outlets: Outlets, plays: PlayRecorder,
        metrics: ServiceMetrics, clock: @escaping @Sendable () -> Timestamp,
        tell: @escaping @Sendable ([QueuedEvent]) -> Void = { _ in }
    ) where Outlets.Outlet == Outlet {
        let state = carousel.definition.carousel(at: carousel.anchor)
        let instance = "\(store.identity)-\(carousel.serial)"
        let outlet = outlets.outlet(for: carousel, instance: instance, state: state)
        self.key = carousel.key
        self.instance = instance
        self.store = store
        self.plays = plays
        self.metrics = metrics
        self.clock = clock
        self.outlet = outlet
        let known = Lock(carousel)
        self.known = known
        let serial = carousel.serial
        // The state before each change, to tell an advance from a schedule's change.
        let previous = Lock(state)
        let history = Lock(ShowHistory(initial: state, from: state.changedAt))
        self.history = history
        engine = CarouselEngine(carousel: state, clock: clock) { changed, cause in
            outlet.publish(changed)
            plays.observe(changed, carousel: serial)
            // Only what does not follow from the state before: the clock's changes do.
            if case .request = cause { history.withLock { $0.recordChange(changed, madeAt: clock()) } }
            let before = previous.withLock { previous in
                defer { previous = changed }
                return previous
            }
            // Requests are counted where they are known apart (commands, admin changes); a state
            // followed from the store was counted by the process that changed it.
            guard case .clock(let lateness) = cause else { return }
            if let lateness { metrics.timerFired(late: lateness) }
            if let ended = before.takeover, changed.takeover == nil, let until = ended.until {
                tell([TakeoverExpiry.event(of: known.withLock { $0 }, banner: ended.banner.id, at: until)])
            }
            // An advance moves the position only (however many steps a late timer caught up);
            // anything else it changed (the rotation, a takeover or a timed pause ending) is the
            // schedule's.
            let advanced =
                before.rotationIDs == changed.rotationIDs && before.takeover == changed.takeover
                && before.isPaused == changed.isPaused
            metrics.changed(advanced ? .advance : .schedule)
        }
    }

    public var name: String { key.name }

    /// The carousel as last stored: its definition and revision are what the admin API shows.
    public var stored: StoredCarousel { known.withLock { $0 } }

    /// Applies a command, written to the store (with its audit entry, as `requester`'s) before it
    /// is published; answers the state it left.
    ///
    /// Group commit: commands wait together, and one write applies all of them in order and
    /// stores the result once (one transaction instead of one each, docs/STORE.md); each still
    /// gets the state right after it, and none is answered before the write that holds it is
    /// committed. The write runs in a task of its own on the engine's queue, queued behind the
    /// commands that came before it: on that queue (`CarouselEngine.taskExecutor`, where the HTTP
    /// handlers run commands) every command already received joins it, and no thread is woken
    /// for it (docs/PERFORMANCE.md, "What a command costs").
    public func perform(_ command: CarouselCommand, by requester: Requester) async throws(ChangeError<CarouselError>)
        -> Carousel
    {
        let result = await withCheckedContinuation {
            (answer: CheckedContinuation<Result<Carousel, ChangeError<CarouselError>>, Never>) in
            let first = waiting.withLock { queue in
                queue.commands.append((command, requester, answer))
                defer { queue.writing = true }
                return !queue.writing
            }
            if first { startWriting() }
        }
        return try result.get()
    }

    /// Writes the waiting commands in a task of its own, on the engine's queue. Not `Task {}`: it
    /// would wait for a thread of the cooperative pool, which may all be busy (it has one per
    /// core; CI saw a command wait there for more than 10 s).
    private func startWriting() {
        Task(executorPreference: engine.taskExecutor) { await self.writeWaitingCommands() }
    }

    /// Writes the waiting commands, a batch at a time, until none is left; then no write is in
    /// progress.
    private func writeWaitingCommands() async {
        while true {
            let batch = waiting.withLock { queue in
                defer { queue.commands = [] }
                if queue.commands.isEmpty { queue.writing = false }
                return queue.commands
            }
            if batch.isEmpty { return }
            let answers = await write(batch.map { ($0.0, $0.1) })
            for ((_, _, answer), result) in zip(batch, answers) { answer.resume(returning: result) }
        }
    }

    /// Applies `commands` in order and stores the result once; for each, the state right after it
    /// or its problem.
    private func write(_ commands: [(CarouselCommand, Requester)]) async -> [Result<
        Carousel, ChangeError<CarouselError>
    >] {
        let requesters = commands.map(\.1)
        let commands = commands.map(\.0)
        let answers: [Result<Carousel, ChangeError<CarouselError>>]
        do throws(ChangeError<CarouselError>) {
            answers = try await engine.change { [self] carousel, now throws(ChangeError<CarouselError>) in
                // Commands that all fail (each with its own problem) need no store: answered
                // as they are, even by a store that refuses writes.
                var trial = carousel
                let answers = Self.apply(commands, to: &trial, at: now)
                guard answers.contains(where: { (try? $0.get()) != nil }) else { return answers }
                var written = answers
                try write(.command, &carousel, at: now) { stored, carousel throws(ChangeError<CarouselError>) in
                    written = Self.apply(commands, to: &carousel, at: now)
                    var changed = stored
                    changed.anchor = carousel.anchor
                    let audit = zip(zip(commands, requesters), written).compactMap { item, result in
                        (try? result.get()).map { state in
                            AuditEntry(
                                item.0.auditAction, by: item.1, at: now, carousel: stored.name,
                                target: state.currentBanner?.id, revision: stored.revision)
                        }
                    }
                    return CarouselWrite(changed, audit: audit)
                }
                return written
            }
        } catch {
            answers = Array(repeating: .failure(error), count: commands.count)  // nothing was written
        }
        metrics.changed(.command, count: answers.count { (try? $0.get()) != nil })
        return answers
    }

    /// `commands` applied in turn; for each, the state right after it or its problem.
    private static func apply(_ commands: [CarouselCommand], to carousel: inout Carousel, at now: Timestamp)
        -> [Result<Carousel, ChangeError<CarouselError>>]
    {
        commands.map { command in
            do throws(CarouselError) {
                try carousel.apply(command, at: now)
                return .success(carousel)
            } catch {
                return .failure(.refused(error))
            }
        }
    }

    /// An admin change: `revise` turns the stored definition into the new one (or throws why
    /// not); the state follows it (the current banner kept when it survives), the store takes
    /// both, then both are published. `condition` is checked on the definition as stored when the
    /// change is made. The new revision is kept in the history as `requester`'s (restoring
    /// revision `restoring`, when it does), and in the audit log as `action` on `target`. A
    /// scheduled change (docs/SCHEDULED.md) names itself in `applying`: made only if it is still
    /// pending (`.store(.notPending)` otherwise).
    public func edit<Refusal: Error>(
        if condition: RevisionCondition?, by requester: Requester, as action: AuditAction, target: String? = nil,
        restoring: UInt64? = nil, applying: Int64? = nil,
        _ revise: @escaping @Sendable (CarouselDefinition) throws(Refusal) -> CarouselDefinition
    ) async throws(ChangeError<Refusal>) -> StoredCarousel {
        let revised = try await engine.change { [self] carousel, now throws(ChangeError<Refusal>) in
            let attribution = Attribution(by: requester, at: now, restoring: restoring)
            return try write(.admin(attribution), &carousel, at: now) { stored, carousel throws(ChangeError<Refusal>) in
                // An invalid change is refused as such whatever the condition says.
                let new: CarouselDefinition
                do throws(Refusal) { new = try revise(stored.definition) } catch { throw .refused(error) }
                guard Self.holds(condition, stored) else { throw .conditionFailed(current: stored) }
                new.redefine(&carousel, from: stored.definition, at: now)
                let revision = stored.revision + 1
                return CarouselWrite(
                    StoredCarousel(definition: new, revision: revision, anchor: carousel.anchor, serial: stored.serial),
                    audit: [AuditEntry(action, attribution, carousel: name, target: target, revision: revision)],
                    applying: applying)
            }
        }
        metrics.changed(.admin)
        return revised
    }

    /// Drops scheduled change `change` without making it (its If-Match no longer holds, or its
    /// request is no longer valid): deleted from the store with an audit entry saying so
    /// (`change.skip`, `because` in its target), in one transaction. Throws
    /// `.store(.notPending)` when it is no longer pending.
    public func skip(_ change: PendingChange, because reason: String) async throws(ChangeError<Never>) {
        _ = try await engine.change { [self] carousel, now throws(ChangeError<Never>) in
            try write(.admin(Attribution(by: change.requester, at: now)), &carousel, at: now) {
                stored, _ throws(ChangeError<Never>) in
                CarouselWrite(
                    stored,
                    audit: [
                        AuditEntry(
                            .skipChange, by: change.requester, at: now, carousel: name,
                            target: "\(change.id): \(reason)", revision: stored.revision)
                    ], applying: change.id)
            }
        }
    }

    /// Wakes the engine at `time` (nil: never) to call `call`: when the next scheduled change
    /// is due (docs/SCHEDULED.md), on the carousel's one timer.
    func wake(at time: Timestamp?, _ call: @escaping @Sendable () -> Void) async {
        await engine.wake(at: time, call)
    }

    /// Deletes the carousel from the store (after checking `condition`). The caller then takes it
    /// out of service with `stop`.
    func delete(if condition: RevisionCondition?, by requester: Requester) async throws(ChangeError<Never>) {
        try await engine.change { [self] _, now throws(ChangeError<Never>) in
            let current = stored
            guard Self.holds(condition, current) else { throw .conditionFailed(current: current) }
            do throws(StoreError) {
                try store.delete(key, expectedRevision: current.revision, by: Attribution(by: requester, at: now))
            } catch {
                throw .store(error)
            }
        }
    }

    /// Brings the carousel up to what the store holds (another process changed it). False when
    /// the store no longer holds it: the caller takes it out of service.
    func refresh() async throws(StoreError) -> Bool {
        try await engine.change { [self] carousel, now throws(StoreError) in
            guard let stored = try store.load(named: name), stored.serial == key.serial else { return false }
            adopt(stored, into: &carousel, at: now)
            known.withLock { $0 = stored }
            return true
        }
    }

    /// Follows a change another process made, as its notification describes it, when this
    /// process knows the carousel at the note's revision (a command elsewhere): true when that
    /// was enough (followed, or older than or the same as what is known: its own change, heard
    /// back). False when the revision moved: the caller reloads it.
    func follow(_ note: ChangeNote) async -> Bool {
        await engine.change { [self] carousel, now in
            let current = known.withLock { $0 }
            guard note.revision == current.revision else { return note.revision < current.revision }
            // Changes of one row commit in turn and `version` never goes back: a lower or equal one
            // is already known.
            guard note.anchor.version > current.anchor.version else { return true }
            var stored = current
            stored.anchor = note.anchor
            adopt(stored, into: &carousel, at: now)
            known.withLock { $0 = stored }
            return true
        }
    }

    /// Runs `decide` inside the store's transaction on this carousel, with `carousel` first
    /// brought up to the row as stored (another process may have changed it since this one last
    /// heard); what `decide` returns is written with its audit entries, then becomes what this
    /// process knows. The store
    /// may try it first on what this process knows (`expecting`), so each call starts afresh.
    @discardableResult
    private func write<Refusal: Error>(
        _ purpose: WritePurpose, _ carousel: inout Carousel, at now: Timestamp,
        _ decide: (StoredCarousel, inout Carousel) throws(ChangeError<Refusal>) -> CarouselWrite
    ) throws(ChangeError<Refusal>) -> StoredCarousel {
        var refusal: ChangeError<Refusal>?
        let written: StoredCarousel
        let original = carousel
        do throws(StoreError) {
            written = try store.modify(key, purpose, expecting: known.withLock { $0 }) { stored in
                carousel = original
                refusal = nil
                adopt(stored, into: &carousel, at: now)
                do throws(ChangeError<Refusal>) {
                    return try decide(stored, &carousel)
                } catch {
                    refusal = error
                    return nil
                }
            }
        } catch {
            throw .store(error)
        }
        if let refusal { throw refusal }
        known.withLock { $0 = written }
        return written
    }

    /// `carousel` set to `stored` as of `now`, unless that is what this process knows already.
    /// The caller records `stored` as known once its change is kept (an engine change that
    /// throws keeps nothing).
    private func adopt(_ stored: StoredCarousel, into carousel: inout Carousel, at now: Timestamp) {
        guard stored != known.withLock({ $0 }) else { return }
        carousel = stored.definition.carousel(at: stored.anchor)
        carousel.advance(to: now)
    }

    /// What a screen's receipt says of it, against what the carousel showed at its instant
    /// (docs/SCREENS.md, "Judging a screen").
    public func check(_ receipt: Receipt, tolerance: Duration, audience: String? = nil) -> StepVerdict {
        history.withLock { $0.checkRemembering(receipt, tolerance: tolerance, audience: audience) }
    }

    /// Whether a screen may have shown banner `id` at `instant`: a banner of the carousel or of
    /// its takeover now, or the one its history says was shown then (since deleted, say).
    public func knows(banner id: String, at instant: Timestamp, audience: String? = nil) -> Bool {
        let snapshot = engine.snapshot
        if snapshot.banners.contains(where: { $0.id == id }) || snapshot.takeover?.banner.id == id { return true }
        return history.withLock { $0.shown(at: instant, audience: audience)?.banner?.id == id }
    }

    /// Whether a screen of `audience` whose latest receipt was for `lastShownAt` has stopped flipping.
    public func isFrozen(lastShownAt: Timestamp, now: Timestamp, grace: Duration, audience: String?) -> Bool {
        history.withLock { $0.isFrozen(lastShownAt: lastShownAt, now: now, grace: grace, audience: audience) }
    }

    /// `isFrozen` for many screens of `audience` whose latest receipts are at `earliest` or after,
    /// walked on to `through` (`ShowHistory.frozenCheck`).
    func frozenCheck(earliest: Timestamp, through: Timestamp, grace: Duration, audience: String?) -> FrozenCheck {
        history.withLock { $0.frozenCheck(earliest: earliest, through: through, grace: grace, audience: audience) }
    }

    /// Moves whenever the history does: what was worked out from it before may no longer hold.
    var historyGeneration: UInt64 { history.withLock { $0.generation } }

    /// Starts the timer; what is shown from now on is counted as played.
    func start() {
        // As of now: the snapshot is the stored anchor's state, which may be long past (another
        // process stored it, and the carousel has advanced since without a write).
        var now = engine.snapshot
        now.advance(to: clock())
        plays.observe(now, carousel: key.serial)
        engine.start()
    }

    /// Stops the timer and ends the event streams; the play going on ends here for this process.
    func stop() {
        engine.stop()
        outlet.close()
        plays.end(carousel: key.serial, at: clock())
    }

    private static func holds(_ condition: RevisionCondition?, _ stored: StoredCarousel) -> Bool {
        condition?(stored.revision) ?? true
    }
}

extension CarouselCommand {
    /// How the audit log names the command.
    var auditAction: AuditAction {
        switch self {
        case .next: .next
        case .previous: .previous
        case .jump: .jump
        case .pause: .pause
        case .resume: .resume
        case .startTakeover: .startTakeover
        case .endTakeover: .endTakeover
        }
    }
}

/// A takeover that ended by itself at its `until` (docs/WEBHOOKS.md): `takeover.ended`, its data as
/// an audited write's with the action `takeover.expire` and the actor `clock`. Every process
/// serving the carousel sees it end at the same instant: the id, made from the carousel, the
/// banner and that instant, is the same in each, so it is queued once.
enum TakeoverExpiry {
    static func event(of carousel: StoredCarousel, banner: String, at until: Timestamp) -> QueuedEvent {
        let entry = AuditEntry(
            AuditAction(rawValue: "takeover.expire"), by: Requester(actor: "clock"), at: until,
            carousel: carousel.name, target: banner, revision: carousel.revision)
        var data = JSONObject()
        entry.addFields(to: &data)
        let id = UUIDText.named("takeover-end \(carousel.serial) \(banner) \(until.nanosecondsSinceEpoch)")
        return QueuedEvent(id: id, type: .takeoverEnded, at: until, data: data)
    }
}
