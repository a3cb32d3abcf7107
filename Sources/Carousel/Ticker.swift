import Dispatch
import Glibc
import Threading
import TimeZones

/// A one-shot wall-clock timer, re-armed for each due time. Its handler receives the time it
/// was armed for, so the receiver can tell a tick that still matches its schedule from a stale one.
final class Ticker: Sendable {
    /// Dispatch sources are thread-safe; the `DispatchSourceTimer` protocol just is not Sendable.
    nonisolated(unsafe) private let timer: DispatchSourceTimer
    private let armedFor = Lock<Timestamp?>(nil)
    /// Where every ticker's handler runs: one queue for all of them rather than one each (a queue
    /// per carousel is memory at 10,000 carousels, docs/PERFORMANCE.md). Concurrent: a handler
    /// only reads its armed time and hands the tick on, and one carousel's never waits for another's.
    private static let queue = DispatchQueue(label: "carousel.ticker", attributes: .concurrent)

    init() {
        timer = DispatchSource.makeTimerSource(queue: Self.queue)
        timer.schedule(wallDeadline: .distantFuture)
        // Resumed at once, unarmed: Dispatch aborts when a source is released while suspended.
        timer.resume()
    }

    /// Sets what a firing calls. Until then, and until `arm`, nothing fires.
    func start(handler: @escaping @Sendable (_ expected: Timestamp) -> Void) {
        timer.setEventHandler { [weak self] in
            if let expected = self?.armedFor.withLock({ $0 }) { handler(expected) }
        }
    }

    /// Fires once at `time` (at once if it is past); nil disarms. Re-arming for the same time is
    /// deliberate after a tick that came early: a one-shot timer does not fire twice by itself.
    func arm(at time: Timestamp?) {
        armedFor.withLock { armed in
            armed = time
            guard let time else {
                timer.schedule(wallDeadline: .distantFuture)
                return
            }
            let nanoseconds = time.nanosecondsSinceEpoch
            let deadline = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
            timer.schedule(wallDeadline: DispatchWallTime(timespec: deadline))
        }
    }

    func cancel() {
        timer.cancel()
    }
}
