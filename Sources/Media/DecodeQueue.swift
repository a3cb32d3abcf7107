import CVips
import Dispatch
import Glibc
import Threading

/// Where uploads are decoded (docs/MEDIA.md): at most `workers` at once, each on a thread of its
/// own scheduled only when a core would otherwise idle (`SCHED_IDLE`, else nice 19; inherited by
/// the threads libvips starts from it), so that while a photo is decoded the request threads
/// still get the cores first. At most `backlog` more wait; past that an upload is turned away
/// (the caller answers 503) rather than holding its 10 MiB in memory behind the others.
///
/// Threads start with the first job and end with `stop()`.
public final class DecodeQueue: Sendable {
    public let workers: Int
    public let backlog: Int
    private let state = Lock(State())
    private let available = DispatchSemaphore(value: 0)

    private struct State {
        var waiting: [Job] = []
        var running = 0
        var threads: [LoopThread] = []
        var stopping = false
    }

    /// A job, and how to tell its caller it will not run.
    private struct Job {
        let run: @Sendable () -> Void
        let cancel: @Sendable () -> Void
    }

    /// The nice value of the decoding threads where `SCHED_IDLE` is refused: the lowest.
    static let niceness: Int32 = 19

    /// Also sets how the process allocates large blocks (each mapped on its own, returned when
    /// freed: `cvips_unmap_large_allocations`), before the first upload arrives.
    public init(workers: Int, backlog: Int) {
        precondition(workers >= 1 && backlog >= 0)
        self.workers = workers
        self.backlog = backlog
        cvips_unmap_large_allocations()
    }

    /// Runs `work` on a decoding thread and returns its result; nil when the queue is full or stopped.
    public func run<Result: Sendable>(_ work: @escaping @Sendable () -> Result) async -> Result? {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result?, Never>) in
            let job = Job(
                run: { continuation.resume(returning: work()) }, cancel: { continuation.resume(returning: nil) })
            let accepted = state.withLock { state -> Bool in
                guard !state.stopping, state.waiting.count + state.running < workers + backlog else { return false }
                state.waiting.append(job)
                if state.threads.count < workers {
                    state.threads.append(LoopThread(name: "media-decode") { [self] in serve() })
                }
                return true
            }
            if accepted {
                available.signal()
            } else {
                continuation.resume(returning: nil)
            }
        }
    }

    /// Uploads decoding or waiting now.
    public var pending: Int { state.withLock { $0.waiting.count + $0.running } }

    /// Ends the threads once the jobs taken have finished; waiting jobs and later ones get nil.
    public func stop() {
        let (threads, cancelled) = state.withLock { state in
            state.stopping = true
            defer { state.waiting.removeAll() }
            return (state.threads, state.waiting)
        }
        for job in cancelled { job.cancel() }
        for _ in threads { available.signal() }
        for thread in threads { thread.join() }
    }

    private func serve() {
        // Linux keeps a policy and a nice value per thread, and 0 is the calling thread alone.
        // SCHED_IDLE, not only nice 19: a request thread waking up takes the core from an idle-
        // policy thread at once, where a nice-19 one may keep it until its slice ends
        // (docs/PERFORMANCE.md, media library). A failure leaves nice 19, or normal priority.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Self.niceness)
        var parameters = sched_param(sched_priority: 0)
        let idlePolicy: Int32 = 5  // SCHED_IDLE, a name Glibc's module leaves out (_GNU_SOURCE)
        _ = sched_setscheduler(0, idlePolicy, &parameters)
        while true {
            available.wait()
            let taken = state.withLock { state -> (job: Job?, stopping: Bool) in
                guard !state.stopping, !state.waiting.isEmpty else { return (nil, state.stopping) }
                state.running += 1
                return (state.waiting.removeFirst(), false)
            }
            if taken.stopping { return }
            guard let job = taken.job else { continue }
            job.run()
            let idle = state.withLock { state in
                state.running -= 1
                return state.running == 0 && state.waiting.isEmpty
            }
            // The last decode of a burst has ended: what its small blocks freed goes back too.
            if idle { cvips_release_freed_memory() }
        }
    }
}
