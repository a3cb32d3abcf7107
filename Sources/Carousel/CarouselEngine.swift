import Threading
import TimeZones

/// Owns the live `Carousel`: applies commands in order, advances it on time with a `Ticker`,
/// and publishes a snapshot after every change. Request threads read `snapshot` without `await`.
/// Its changes may block on a store, so it runs on a queue of its own, not on the cooperative pool.
public actor CarouselEngine {
    private let executor = BlockingSerialExecutor(label: "carousel.engine")
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    /// For a task that is mostly this engine's work: it runs on the engine's queue, and goes to
    /// the engine and back with no thread woken (`BlockingSerialExecutor.tasks`).
    public nonisolated var taskExecutor: any TaskExecutor { executor.tasks }
    private var carousel: Carousel
    private let clock: @Sendable () -> Timestamp
    private let onChange: @Sendable (Carousel, ChangeCause) -> Void
    private let published: Lock<Carousel>
    private let ticker = Ticker()
    /// When something outside the carousel's own schedule is due (a scheduled change), and what
    /// to call then: the same one timer wakes for it.
    private var due: (at: Timestamp, call: @Sendable () -> Void)?

    /// - Parameters:
    ///   - clock: the time commands and ticks are applied at.
    ///   - onChange: called inside the engine with each new state, before the command that
    ///     caused it returns, so that views derived from it (pre-encoded responses) are never
    ///     older than a completed command. Not called for the initial `carousel`. With what caused
    ///     it: the carousel's own schedule on its timer, or a `change`.
    public init(
        carousel: Carousel, clock: @escaping @Sendable () -> Timestamp = Timestamp.now,
        onChange: @escaping @Sendable (Carousel, ChangeCause) -> Void = { _, _ in }
    ) {
        self.carousel = carousel
        self.clock = clock
        self.onChange = onChange
        published = Lock(carousel)
    }

    /// The latest published state; safe from any thread, never waits on the actor.
    public nonisolated var snapshot: Carousel {
        published.withLock { $0 }
    }

    /// The changes planned from the clock's now (`Carousel.plan`) with `redefinitions` made on the
    /// way, from the latest published state, for the next `span` (else as far as `limit` goes),
    /// and until when they are complete, for the screens of `audience`; safe from any thread.
    public nonisolated func plan(
        limit: Int, span: Duration?, redefinitions: [PlannedRedefinition] = [], audience: String? = nil
    ) -> (entries: [TimelineEntry], until: Timestamp) {
        let now = clock()
        return snapshot.plan(
            from: now, limit: limit, before: span.map { now + $0 }, redefinitions: redefinitions, audience: audience)
    }

    /// The state planned at `time` (`Carousel.projected`) from the latest published state, with
    /// `redefinitions` made on the way; safe from any thread.
    public nonisolated func projected(to time: Timestamp, redefinitions: [PlannedRedefinition] = []) -> Carousel {
        snapshot.projected(from: clock(), to: time, redefinitions: redefinitions)
    }

    /// Starts advancing the carousel on its schedule. Returns at once; the first catch-up with
    /// the clock and the arming of the timer happen inside the engine, in order with commands.
    public nonisolated func start() {
        ticker.start { [weak self] expected in
            // Dispatch on Linux cannot run actor code directly (docs/ARCHITECTURE.md, the timer path): hop in.
            Task { await self?.tick(expected: expected) }
        }
        Task { await self.catchUp() }
    }

    /// Stops the timer; the carousel no longer advances by itself.
    public nonisolated func stop() {
        ticker.cancel()
    }

    /// Applies `command` at the clock's current time and returns the resulting state.
    public func perform(_ command: CarouselCommand) throws(CarouselError) -> Carousel {
        try change { carousel, now throws(CarouselError) in
            try carousel.apply(command, at: now)
            return carousel
        }
    }

    /// Catches up with the clock, then runs `body` on a copy of the carousel with the current time.
    /// When `body` returns, the copy becomes the carousel and is published; when it throws, only
    /// the catch-up (which would have happened anyway) is kept. `body` is where a change is
    /// written to a store: written, then published (docs/STORE.md). Changes run one at a time.
    public func change<Result: Sendable, Failure: Error>(
        _ body: @Sendable (inout Carousel, Timestamp) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        let now = clock()
        carousel.advance(to: now)
        defer { publish() }
        var changed = carousel
        let result = try body(&changed, now)
        carousel = changed
        return result
    }

    /// Also wakes at `time` (nil: no longer) and then calls `call`, inside the engine after
    /// catching up with the clock: the timer that makes scheduled changes (docs/SCHEDULED.md) is
    /// the one that advances the carousel. One such time at once; a later call replaces it.
    public func wake(at time: Timestamp?, _ call: @escaping @Sendable () -> Void) {
        due = time.map { ($0, call) }
        armTimer()
    }

    /// The ticker fired for `expected`. Ignored when neither the schedule nor a wake is due then
    /// (a command restarted the countdown since it was armed); otherwise catches up with the clock,
    /// then calls the wake's call when it was for it.
    func tick(expected: Timestamp) {
        let woken = due.flatMap { $0.at == expected ? $0.call : nil }
        guard woken != nil || expected == carousel.nextChangeAt else { return }
        if woken != nil { due = nil }
        catchUp(due: expected)
        woken?()
    }

    /// Catches up with the clock: at start (`due` nil), or on the timer armed for `due`.
    private func catchUp(due: Timestamp? = nil) {
        let now = clock()
        carousel.advance(to: now)
        publish(.clock(lateness: due.map { now - $0 }))
    }

    private func publish(_ cause: ChangeCause = .request) {
        let changed = published.withLock { latest in
            guard latest != carousel else { return false }
            latest = carousel
            return true
        }
        if changed { onChange(carousel, cause) }
        armTimer()
    }

    /// The timer for what comes first: the carousel's next change or the wake.
    private func armTimer() {
        ticker.arm(at: [carousel.nextChangeAt, due?.at].compactMap { $0 }.min())
    }
}

/// What made a carousel change (`CarouselEngine`'s `onChange`).
public enum ChangeCause: Sendable, Equatable {
    /// Its own schedule, on its timer: how long after the due time the timer fired (nil for the
    /// catch-up at start).
    case clock(lateness: Duration?)
    /// A `change`: a command, an edit, a reload from the store.
    case request
}
