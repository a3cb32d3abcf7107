import Dispatch
import Glibc
import Platform

// Where Swift concurrency code that may block runs (docs/ARCHITECTURE.md, who runs where).
//
// Swift's cooperative pool has one thread per core and never adds one when a job blocks: a store
// write that waits 5 s for a lock, or a PostgreSQL round trip, would hold a core's only thread
// and every other task behind it. Such code runs on Dispatch's overcommit threads instead: a
// queue created with a label targets the overcommit root queue, which starts another thread
// when all of its threads are busy, blocked or not (up to 255 threads in all, on Linux).

/// A serial executor on a queue of its own, for an actor whose isolated code may block:
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }`.
public final class BlockingSerialExecutor: SerialExecutor {
    private let queue: DispatchQueue
    /// Runs the tasks that prefer it on the same queue, one job at a time with the actor's: a task
    /// that is mostly the actor's work (a command) goes to the actor and back on the thread that
    /// drains the queue, where each hop to another queue would wake a thread.
    public let tasks: SameQueueTaskExecutor

    public init(label: String) {
        queue = DispatchQueue(label: label)
        tasks = SameQueueTaskExecutor(queue)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }
}

/// A task executor on a `BlockingSerialExecutor`'s queue (its `tasks`).
public final class SameQueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    fileprivate init(_ queue: DispatchQueue) {
        self.queue = queue
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A task executor for tasks that may block outside any actor:
/// `Task(executorPreference: BlockingTaskExecutor.shared) { … }`. Each job gets a serial queue of
/// its own (an allocation), so that jobs never wait for one another's thread.
public final class BlockingTaskExecutor: TaskExecutor {
    public static let shared = BlockingTaskExecutor()

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        DispatchQueue(label: "blocking-work").async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A thread of its own for a loop that blocks for as long as its owner lives (an epoll loop, a
/// `LISTEN` connection's `poll`): not a Dispatch worker, of which such a loop would hold one for
/// good, and many of them (a test process runs a hundred servers) all 255 that Dispatch starts.
public final class LoopThread: @unchecked Sendable {
    private var thread = pthread_t()

    private final class Body {
        let run: @Sendable () -> Void
        init(_ run: @escaping @Sendable () -> Void) { self.run = run }
    }

    /// Starts `body` on a new thread at once, named `name` (at most 15 bytes are kept) so that
    /// `top -H`, `perf` and a debugger's thread list say whose it is.
    public init(name: String, _ body: @escaping @Sendable () -> Void) {
        let context = Unmanaged.passRetained(
            Body {
                Self.nameCurrentThread(name)
                body()
            }
        ).toOpaque()
        let created = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Body>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, context)
        precondition(created == 0, "pthread_create: \(Errno(created))")
    }

    /// Through /proc (pthread_setname_np is not visible to Swift without _GNU_SOURCE). A name
    /// that cannot be set leaves the thread unnamed, nothing else.
    private static func nameCurrentThread(_ name: String) {
        guard let comm = try? FileDescriptor.open("/proc/thread-self/comm", O_WRONLY) else { return }
        let bytes = Array(name.utf8.prefix(15))
        _ = write(comm.rawValue, bytes, bytes.count)
    }

    /// Waits for the body to return. Once.
    public func join() {
        let joined = pthread_join(thread, nil)
        precondition(joined == 0, "pthread_join: \(Errno(joined))")
    }
}
