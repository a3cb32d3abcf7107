import Carousel
import Logging
import Store
import Threading
import TimeZones

/// Scheduled changes (docs/SCHEDULED.md) as this process knows them: read from the store (again
/// whenever this or another process sharing it schedules, cancels or makes one), each carousel's
/// engine woken at its soonest on the carousel's one timer, and the maker (the HTTP layer, which
/// reads the request each keeps) called when one is due. Of several processes making the same
/// change at the same moment the store lets one; the others find it gone.
public final class ScheduledChanges<Outlets: CarouselOutlets>: Sendable {
    public typealias Live = LiveCarousel<Outlets.Outlet>
    /// Makes `change` on `live`, or drops it saying why; either way it is no longer pending
    /// afterwards unless the store refused (then it is tried again after `retryPause`).
    public typealias Maker = @Sendable (_ change: PendingChange, _ live: Live) async -> Void

    /// How long a change the store refused to make waits before it is tried again.
    public static var retryPause: Duration { .seconds(5) }

    private let store: any CarouselStore
    private let directory: CarouselDirectory<Outlets>
    private let logger: Logger
    private let clock: @Sendable () -> Timestamp
    private let state = Lock(State())

    private struct State {
        var changes: [PendingChange] = []
        /// Changes tried and still pending (the store refused): not tried again before then.
        var notBefore: [Int64: Timestamp] = [:]
        /// The wake each carousel's engine has, by serial: armed again only when it changes.
        var armed: [Int64: Timestamp] = [:]
        var maker: Maker?

        /// When `change` is to be made: its time, or later when it was tried and the store refused.
        func dueTime(of change: PendingChange) -> Timestamp {
            max(change.at, notBefore[change.id] ?? change.at)
        }
    }

    init(
        store: any CarouselStore, directory: CarouselDirectory<Outlets>, logger: Logger,
        clock: @escaping @Sendable () -> Timestamp
    ) {
        self.store = store
        self.directory = directory
        self.logger = logger
        self.clock = clock
    }

    /// From now on, due changes are made by `maker`.
    public func start(making maker: @escaping Maker) {
        state.withLock { $0.maker = maker }
        Task(executorPreference: BlockingTaskExecutor.shared) { await self.reload() }
    }

    /// Keeps `change` in the store (its id is the store's), to be made at its time.
    public func schedule(_ change: PendingChange) async throws(StoreError) -> PendingChange {
        let stored = try store.schedule(change)
        await reload()
        return stored
    }

    /// The pending changes of carousel `serial`, soonest first, as the store has them.
    public func pending(of serial: Int64) throws(StoreError) -> [PendingChange] {
        try store.pendingChanges().filter { $0.carousel == serial }
    }

    /// The pending changes of carousel `serial` as this process last read them, soonest first
    /// (the store lists them so), for planning: no store read.
    public func known(of serial: Int64) -> [PendingChange] {
        state.withLock { state in state.changes.filter { $0.carousel == serial } }
    }

    /// Cancels pending change `id` of carousel `serial`; false when it is not one of its pending changes.
    public func cancel(_ id: Int64, of serial: Int64, by attribution: Attribution) async throws(StoreError) -> Bool {
        let cancelled = try store.cancelPending(id, of: serial, by: attribution)
        await reload()
        return cancelled
    }

    /// Reads the pending changes from the store again and wakes each carousel at its soonest.
    /// When the store cannot be read, what was known stays armed.
    func reload() async {
        let changes: [PendingChange]
        do throws(StoreError) {
            changes = try store.pendingChanges()
        } catch {
            logger.warning(
                "could not read the scheduled changes from \(store.description): \(error); the ones known stay")
            return
        }
        state.withLock { state in
            state.changes = changes
            let pending = Set(changes.map(\.id))
            state.notBefore = state.notBefore.filter { pending.contains($0.key) }
        }
        await arm()
    }

    /// Each carousel's wake set to its soonest change (none when it has none), where it moved.
    private func arm() async {
        for live in directory.all {
            let serial = live.key.serial
            let (time, changed) = state.withLock { state in
                let time = state.changes.filter { $0.carousel == serial }.map { state.dueTime(of: $0) }.min()
                let changed = state.armed[serial] != time
                state.armed[serial] = time
                return (time, changed)
            }
            guard changed else { continue }
            // Weak: the engine keeps the call until it fires, and it must not keep the carousel
            // or this object alive (a cycle through the directory).
            await live.wake(at: time) { [weak self, weak live] in
                guard let self, let live else { return }
                Task(executorPreference: BlockingTaskExecutor.shared) { await self.makeDue(on: live) }
            }
        }
    }

    /// Makes the changes of `live` that are due, in order, then reads what is left.
    private func makeDue(on live: Live) async {
        let now = clock()
        let (due, maker) = state.withLock { state in
            state.armed[live.key.serial] = nil  // the wake was used
            let due = state.changes.filter { $0.carousel == live.key.serial && state.dueTime(of: $0) <= now }
            return (due, state.maker)
        }
        guard let maker else { return }
        for change in due { await maker(change, live) }
        // Those the store refused are still pending after the reload: tried again later.
        state.withLock { state in for change in due { state.notBefore[change.id] = now + Self.retryPause } }
        await reload()
    }
}
