import Logging
import Store
import Threading

/// Keeps the carousels in service in step with a store other processes change too (PostgreSQL,
/// docs/STORE.md): every change the store reports is followed in the directory, and readiness
/// (`GET /readyz`) is known here. A burst of notifications for one carousel costs one reload,
/// plus one for what arrived while it ran: a carousel is never queued twice.
final class StoreFollower<Outlets: CarouselOutlets>: Sendable {
    private let directory: CarouselDirectory<Outlets>
    private let tokens: NamedTokens
    private let scheduled: ScheduledChanges<Outlets>
    private let store: any CarouselStore
    private let logger: Logger
    private let state: Lock<State>
    /// How long a failed reload of everything waits before it is tried again.
    static var retryPause: Duration { .seconds(1) }

    private struct State {
        /// Carousels waiting to be followed, with the latest note heard of each.
        var queued: [String: ChangeNote?] = [:]
        var everythingQueued = false
        /// The carousels have been loaded: at start, or after the store was first reached.
        var loaded: Bool
        /// Run before the first reload, when the store could not be reached at start (seeding).
        var beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)?
        /// The reason last reported, while the store is out of reach.
        var unreachable: String?
    }

    /// - Parameter beforeFirstLoad: nil when the carousels were loaded at start; otherwise what
    ///   to do once the store is reached, before loading them (seeding it when empty).
    init(
        directory: CarouselDirectory<Outlets>, tokens: NamedTokens, scheduled: ScheduledChanges<Outlets>,
        store: any CarouselStore, logger: Logger, beforeFirstLoad: (@Sendable () throws(StoreError) -> Void)?
    ) {
        self.directory = directory
        self.tokens = tokens
        self.scheduled = scheduled
        self.store = store
        self.logger = logger
        state = Lock(State(loaded: beforeFirstLoad == nil, beforeFirstLoad: beforeFirstLoad))
    }

    /// Nil when the service is ready for traffic; otherwise why not, for an operator.
    var notReady: String? {
        if let reason = store.unreachable { return reason }
        return state.withLock { $0.loaded } ? nil : "the carousels have not been loaded from \(store.description) yet"
    }

    /// Starts following the store's reports.
    func start() {
        store.observeChanges { [self] change in hear(change) }
    }

    private func hear(_ change: StoreChange) {
        switch change {
        case .unreachable(let reason):
            let first = state.withLock { state in
                defer { state.unreachable = reason }
                return state.unreachable == nil
            }
            if first {
                logger.warning(
                    "\(reason). Reads go on from memory and the schedule keeps advancing; changes get 503 until it "
                        + "is back, and /readyz answers 503")
            }
        case .everything:
            let (queue, wasUnreachable) = state.withLock { state in
                defer {
                    state.everythingQueued = true
                    state.unreachable = nil
                }
                return (!state.everythingQueued, state.unreachable != nil)
            }
            if wasUnreachable {
                logger.notice(
                    "\(store.description) is reachable again: reloading every carousel (changes may have been missed)")
            }
            if queue { Task(executorPreference: BlockingTaskExecutor.shared) { await self.reloadEverything() } }
        case .pending:
            // Scheduled, cancelled or made elsewhere: read them all again (a few rows).
            Task(executorPreference: BlockingTaskExecutor.shared) { await self.scheduled.reload() }
        case .tokens:
            // A revocation elsewhere: read them all again at once (a few rows).
            Task(executorPreference: BlockingTaskExecutor.shared) { self.tokens.reload() }
        case .carousel(let name, let note):
            // Notifications arrive in the order of their commits: the latest note says it all.
            let queue = state.withLock { state in state.queued.updateValue(note, forKey: name) == nil }
            if queue { Task(executorPreference: BlockingTaskExecutor.shared) { await self.reload(name) } }
        }
    }

    private func reload(_ name: String) async {
        // Taken out: a change heard from now on queues another reload.
        let note = state.withLock { $0.queued.removeValue(forKey: name) } ?? nil
        do {
            try await directory.follow(.carousel(name: name, note: note))
        } catch {
            logger.warning("could not reload carousel '\(name)' after another replica changed it: \(error)")
        }
    }

    private func reloadEverything() async {
        let beforeFirstLoad = state.withLock { state in
            state.everythingQueued = false
            return state.beforeFirstLoad
        }
        do {
            try beforeFirstLoad?()
            try await directory.follow(.everything)
            tokens.reload()
            await scheduled.reload()
            let first = state.withLock { state in
                defer {
                    state.loaded = true
                    state.beforeFirstLoad = nil
                }
                return !state.loaded
            }
            if first {
                logger.notice("loaded \(directory.all.count) carousels from \(store.description): ready")
            }
        } catch {
            logger.warning(
                "could not reload the carousels from \(store.description) (\(error)); trying again in "
                    + "\(Self.retryPause)")
            try? await Task.sleep(for: Self.retryPause)
            // Out of reach again instead: the store reports `.everything` when it is back.
            if store.unreachable == nil { hear(.everything) }
        }
    }
}
