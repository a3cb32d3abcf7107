import Carousel
import Definitions
import Locking
import MicroHTTP
import Store
import TimeZones

/// One carousel being served: its engine (the state), the read views and event stream the engine
/// feeds, and its definition as last stored. Every change runs in the engine, one at a time, and
/// is written to the store before anyone sees it (docs/STORE.md: write, then publish).
final class LiveCarousel: Sendable {
    let key: CarouselKey
    let engine: CarouselEngine
    let views: ReadViews
    let events: EventHub
    /// Prefix of this carousel's ETags: the store and the serial, so that neither another
    /// store's carousel nor a re-created one of the same name ever shares a tag with it.
    private let instance: String
    private let store: any CarouselStore
    private let plays: PlayRecorder
    private let metrics: ServiceMetrics
    private let clock: @Sendable () -> Timestamp
    /// The carousel as this process last read or wrote it in the store. Changed only inside the
    /// engine, so that it moves in step with the state.
    private let known: Lock<StoredCarousel>
    /// Commands waiting for the next write, and whether a writer is draining them.
    private let waiting = Lock<WaitingCommands>(WaitingCommands())

    private struct WaitingCommands {
        var commands: [(CarouselCommand, CheckedContinuation<Result<Carousel, Problem>, Never>)] = []
        var writing = false
    }

    init(
        _ carousel: StoredCarousel, store: any CarouselStore, cors: CORSPolicy, streams: StreamRegistry,
        plays: PlayRecorder, metrics: ServiceMetrics, clock: @escaping @Sendable () -> Timestamp
    ) {
        let state = carousel.definition.carousel(at: carousel.anchor)
        let instance = "\(store.identity)-\(carousel.serial)"
        let views = ReadViews(initial: state, cors: cors, instance: instance)
        let events = EventHub(
            group: "carousel-\(carousel.serial)", version: state.version, stateJSON: views.stateJSON, streams: streams)
        self.key = carousel.key
        self.instance = instance
        self.store = store
        self.plays = plays
        self.metrics = metrics
        self.clock = clock
        self.views = views
        self.events = events
        known = Lock(carousel)
        let serial = carousel.serial
        // The state before each change, to tell an advance from a schedule's change.
        let previous = Lock(state)
        engine = CarouselEngine(carousel: state, clock: clock) { changed, cause in
            views.publish(changed)
            events.publish(version: changed.version, stateJSON: views.stateJSON)
            plays.observe(changed, carousel: serial)
            let before = previous.withLock { previous in
                defer { previous = changed }
                return previous
            }
            // Requests are counted where they are known apart (commands, admin changes); a state
            // followed from the store was counted by the process that changed it.
            guard case .clock(let lateness) = cause else { return }
            if let lateness { metrics.timerFired(late: lateness) }
            // An advance moves the position only (however many steps a late timer caught up);
            // anything else it changed (the rotation, a takeover or a timed pause ending) is the
            // schedule's.
            let advanced =
                before.rotationIDs == changed.rotationIDs && before.takeover == changed.takeover
                && before.isPaused == changed.isPaused
            metrics.changed(advanced ? .advance : .schedule)
        }
    }

    var name: String { key.name }

    /// The carousel as last stored: its definition and revision are what the admin API shows.
    var stored: StoredCarousel { known.withLock { $0 } }

    /// The definition's strong ETag, for `If-Match`.
    func definitionTag(revision: UInt64) -> String {
        EntityTag.make(instance: instance, version: revision, resource: "definition")
    }

    /// Applies a command, written to the store before it is published; answers the state it left.
    ///
    /// Group commit: commands that arrive while a write is in progress wait together, and the next
    /// write applies all of them in order and stores the result once (one transaction instead of
    /// one each, docs/STORE.md); each still gets the state right after it, and none is answered
    /// before the write that holds it is committed.
    func perform(_ command: CarouselCommand) async throws(Problem) -> Carousel {
        let result = await withCheckedContinuation { (answer: CheckedContinuation<Result<Carousel, Problem>, Never>) in
            let first = waiting.withLock { queue in
                queue.commands.append((command, answer))
                defer { queue.writing = true }
                return !queue.writing
            }
            // Not `Task {}`: it would not inherit the deferred answer's executor preference, and
            // would wait for a thread of the cooperative pool, which may all be busy (it has one
            // per core; CI saw a command wait there for more than 10 s).
            if first { Task(executorPreference: BlockingTaskExecutor.shared) { await self.writeWaitingCommands() } }
        }
        return try result.get()
    }

    /// Writes the waiting commands, a batch at a time, until none is left.
    private func writeWaitingCommands() async {
        while true {
            let batch = waiting.withLock { queue in
                defer { queue.commands = [] }
                if queue.commands.isEmpty { queue.writing = false }
                return queue.commands
            }
            if batch.isEmpty { return }
            let commands = batch.map(\.0)
            let answers: [Result<Carousel, Problem>]
            do throws(Problem) {
                answers = try await engine.change { [self] carousel, now throws(Problem) in
                    // Commands that all fail (each with its own problem) need no store: answered
                    // as they are, even by a store that refuses writes.
                    var trial = carousel
                    let answers = Self.apply(commands, to: &trial, at: now)
                    guard answers.contains(where: { (try? $0.get()) != nil }) else { return answers }
                    var written = answers
                    try write(.command, &carousel, at: now) { stored, carousel throws(Problem) in
                        written = Self.apply(commands, to: &carousel, at: now)
                        var changed = stored
                        changed.anchor = carousel.anchor
                        return changed
                    }
                    return written
                }
            } catch {
                answers = Array(repeating: .failure(error), count: batch.count)  // nothing was written
            }
            metrics.changed(.command, count: answers.count { (try? $0.get()) != nil })
            for ((_, answer), result) in zip(batch, answers) { answer.resume(returning: result) }
        }
    }

    /// `commands` applied in turn; for each, the state right after it or its problem.
    private static func apply(_ commands: [CarouselCommand], to carousel: inout Carousel, at now: Timestamp)
        -> [Result<Carousel, Problem>]
    {
        commands.map { command in
            do throws(CarouselError) {
                try carousel.apply(command, at: now)
                return .success(carousel)
            } catch {
                return .failure(BannerAPI.problem(for: error))
            }
        }
    }

    /// An admin change: `revise` turns the stored definition into the new one (or throws the
    /// problem with it); the state follows it (the current banner kept when it survives), the
    /// store takes both, then both are published. `ifMatch` is checked against the definition's
    /// ETag as stored when the change is made.
    func edit(
        ifMatch: String?, _ revise: @escaping @Sendable (CarouselDefinition) throws(Problem) -> CarouselDefinition
    ) async throws(Problem) -> StoredCarousel {
        let revised = try await engine.change { [self] carousel, now throws(Problem) in
            try write(.admin, &carousel, at: now) { stored, carousel throws(Problem) in
                // An invalid change is refused as such whatever If-Match says.
                let new = try revise(stored.definition)
                try checkPrecondition(ifMatch, stored)
                new.redefine(&carousel, from: stored.definition, at: now)
                return StoredCarousel(
                    definition: new, revision: stored.revision + 1, anchor: carousel.anchor, serial: stored.serial)
            }
        }
        metrics.changed(.admin)
        return revised
    }

    /// Deletes the carousel from the store (after checking `ifMatch`). The caller then takes it
    /// out of service with `stop`.
    func delete(ifMatch: String?) async throws(Problem) {
        try await engine.change { [self] _, _ throws(Problem) in
            let current = stored
            try checkPrecondition(ifMatch, current)
            do throws(StoreError) {
                try store.delete(key, expectedRevision: current.revision)
            } catch {
                throw Problem.store(error)
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
    /// heard); what `decide` returns is written, then becomes what this process knows. The store
    /// may try it first on what this process knows (`expecting`), so each call starts afresh.
    @discardableResult
    private func write(
        _ purpose: WritePurpose, _ carousel: inout Carousel, at now: Timestamp,
        _ decide: (StoredCarousel, inout Carousel) throws(Problem) -> StoredCarousel
    ) throws(Problem) -> StoredCarousel {
        var refusal: Problem?
        let written: StoredCarousel
        let original = carousel
        do throws(StoreError) {
            written = try store.modify(key, purpose, expecting: known.withLock { $0 }) { stored in
                carousel = original
                refusal = nil
                adopt(stored, into: &carousel, at: now)
                do throws(Problem) {
                    return try decide(stored, &carousel)
                } catch {
                    refusal = error
                    return nil
                }
            }
        } catch {
            throw Problem.store(error)
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
        events.finishAll()
        plays.end(carousel: key.serial, at: clock())
    }

    private func checkPrecondition(_ ifMatch: String?, _ current: StoredCarousel) throws(Problem) {
        guard let ifMatch else { return }
        let tag = definitionTag(revision: current.revision)
        guard !EntityTag.ifMatch(ifMatch, tag) else { return }
        throw Problem(
            status: 412,
            detail: "If-Match \(ifMatch) is not the carousel '\(name)' as it is now (\(tag), revision "
                + "\(current.revision)): someone changed it since you read it; GET it again, reapply your change "
                + "and send the new ETag",
            headers: [HTTPHeader("ETag", tag)])
    }
}

extension Problem {
    /// The answer for a store that did not do what it was asked (docs/STORE.md).
    static func store(_ error: StoreError) -> Problem {
        switch error {
        case .duplicate(let name):
            Problem(
                status: 409, detail: "a carousel named '\(name)' exists already; PUT /carousels/\(name) replaces it")
        case .notFound(let name):
            notFound(carousel: name)
        case .conflict(let name, let revision):
            Problem(
                status: 412,
                detail: "carousel '\(name)' was changed meanwhile (now revision \(revision)); GET it again, "
                    + "reapply your change and retry")
        case .unavailable(let detail), .unusable(let detail):
            Problem(
                status: 503, detail: "nothing was changed: \(detail)",
                headers: [HTTPHeader("Retry-After", "\(retryAfterSeconds)")])
        }
    }

    /// Seconds a client is asked to wait before retrying a write the store refused.
    static let retryAfterSeconds = 5

    static func notFound(carousel name: String) -> Problem {
        Problem(status: 404, detail: "no carousel named '\(name)'; GET /carousels lists them")
    }
}
