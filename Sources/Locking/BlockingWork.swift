import Dispatch

// Where Swift concurrency code that may block runs (docs/ARCHITECTURE.md, who runs where).
//
// Swift's cooperative pool has one thread per core and never adds one when a job blocks: a store
// write that waits 5 s for a lock, or a PostgreSQL round trip, would hold a core's only thread
// and every other task behind it. Such code runs on Dispatch's overcommit threads instead: a
// queue created with a label targets the overcommit root queue, which starts another thread
// when all of its threads are busy, blocked or not.

/// A serial executor on a queue of its own, for an actor whose isolated code may block:
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }`.
public final class BlockingSerialExecutor: SerialExecutor {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
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
