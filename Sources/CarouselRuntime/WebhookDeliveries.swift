import Dispatch
import Logging
import Store
import Threading
import TimeZones

/// Something to call, set once its callee exists: the store wrapper rings it after a write that
/// may have queued webhook deliveries, before the worker that answers it is made.
final class Doorbell: Sendable {
    private let answer = Lock<(@Sendable () -> Void)?>(nil)

    func answer(with call: @escaping @Sendable () -> Void) { answer.withLock { $0 = call } }

    func ring() { answer.withLock { $0 }?() }
}

/// Sends the webhook deliveries the store queues (docs/WEBHOOKS.md): woken when a write of this
/// process queued some, else when the soonest one waiting is due, and at least every
/// `DeliveryWorker.idleCheck` (deliveries another process queued and could not send, having died).
/// Each due delivery is claimed in the store first, so that across processes one sends it; a few
/// are sent at once, each attempt on a thread of its own (a receiver that hangs holds one
/// thread for `DeliveryRetry.timeout`, not the others). Its own serial queue runs the rounds.
public final class DeliveryWorker: Sendable {
    /// Makes one attempt: POSTs the delivery, signed, and says how it went. Blocking.
    public typealias Send = @Sendable (DueDelivery) -> DeliveryAttempt

    /// Deliveries claimed in one round, and sent at once.
    static let round = 16
    static let idleCheck: Duration = .seconds(30)
    static let forgetEvery: Duration = .seconds(3600)

    private let store: any CarouselStore
    private let send: Send
    private let logger: Logger
    private let clock: @Sendable () -> Timestamp
    private let queue = DispatchQueue(label: "webhook deliveries")
    /// Dispatch sources are thread-safe; the `DispatchSourceTimer` protocol just is not Sendable.
    nonisolated(unsafe) private let timer: any DispatchSourceTimer

    private struct State {
        /// A round is asked for and not begun: rings meanwhile add nothing.
        var asked = false
        var stopped = false
        /// The store failed last time: said once, until it works again.
        var failing = false
        var lastForget: Timestamp?
    }
    private let state = Lock(State())

    init(store: any CarouselStore, send: @escaping Send, logger: Logger, clock: @escaping @Sendable () -> Timestamp) {
        self.store = store
        self.send = send
        self.logger = logger
        self.clock = clock
        timer = DispatchSource.makeTimerSource(queue: queue)
        // Active from the start: libdispatch traps when an inactive source is released (a
        // service that fails to start never starts its worker).
        timer.setEventHandler { [weak self] in self?.rounds() }
        timer.schedule(deadline: .distantFuture)
        timer.activate()
    }

    /// Starts with a round: what an earlier run left queued is sent now.
    func start() { ring() }

    func stop() {
        state.withLock { $0.stopped = true }
        timer.cancel()
    }

    /// Asks for a round soon (something was queued).
    func ring() {
        let ask = state.withLock { state in
            defer { state.asked = true }
            return !state.asked && !state.stopped
        }
        if ask { queue.async { [weak self] in self?.rounds() } }
    }

    /// Claims and sends what is due until nothing is, then sleeps until the soonest delivery
    /// waiting is due (at most `idleCheck`).
    private func rounds() {
        guard
            state.withLock({ state in
                state.asked = false
                return !state.stopped
            })
        else { return }
        var wake = clock() + Self.idleCheck
        do throws(StoreError) {
            while true {
                let now = clock()
                let due = try store.claimDeliveries(dueAt: now, until: now + DeliveryRetry.claim, limit: Self.round)
                if due.isEmpty { break }
                try attempt(due)
            }
            if let next = try store.nextDeliveryDue() { wake = min(wake, next) }
            forgetOld()
            if state.withLock({ $0.failing }) {
                state.withLock { $0.failing = false }
                logger.notice("webhook deliveries are read from the store again")
            }
        } catch {
            let first = state.withLock { state in
                defer { state.failing = true }
                return !state.failing
            }
            if first {
                logger.error(
                    "webhook deliveries cannot be read or kept: \(error); they wait in the store, tried again in \(Self.idleCheck.seconds) s"
                )
            }
        }
        let delay = max(wake - clock(), .zero)
        timer.schedule(deadline: .now() + .nanoseconds(Int(delay.nanoseconds)))
    }

    /// Sends `due` at once, each on a thread of its own, and keeps how each went.
    private func attempt(_ due: [DueDelivery]) throws(StoreError) {
        let outcomes = Lock([DeliveryAttempt?](repeating: nil, count: due.count))
        let group = DispatchGroup()
        for (index, delivery) in due.enumerated() {
            DispatchQueue.global().async(group: group) { [send] in
                let attempt = send(delivery)
                outcomes.withLock { $0[index] = attempt }
            }
        }
        group.wait()
        for (delivery, attempt) in zip(due, outcomes.withLock { $0 }) {
            guard let attempt else { continue }
            let retryAt =
                attempt.delivered
                ? nil
                : DeliveryRetry.next(afterFailed: delivery.attempts + 1, createdAt: delivery.createdAt, now: attempt.at)
            try store.finishDelivery(delivery.number, attempt, retryAt: retryAt)
            if !attempt.delivered {
                let what =
                    "webhook \(delivery.webhook) (\(delivery.url)): delivery \(delivery.event) (\(delivery.type))"
                let why = attempt.error ?? "HTTP \(attempt.status ?? 0)"
                if let retryAt {
                    logger.warning(
                        "\(what) attempt \(delivery.attempts + 1) failed: \(why); next attempt at \(retryAt.rfc3339)")
                } else {
                    logger.error(
                        "\(what) failed: \(why); given up after \(delivery.attempts + 1) attempts over 24 h (GET /webhooks/\(delivery.webhook)/deliveries lists it)"
                    )
                }
            }
        }
    }

    /// Forgets deliveries done for longer than `DeliveryRetry.kept`, once an hour.
    private func forgetOld() {
        let now = clock()
        let due = state.withLock { state in
            guard state.lastForget.map({ now - $0 >= Self.forgetEvery }) ?? true else { return false }
            state.lastForget = now
            return true
        }
        guard due else { return }
        do throws(StoreError) {
            _ = try store.forgetDeliveries(doneBefore: now - DeliveryRetry.kept)
        } catch {
            logger.warning("forgetting old webhook deliveries failed: \(error); tried again in an hour")
        }
    }
}
