import Dispatch

/// `work`, which blocks (a store's first `fsync`, a server's `stop`, a program run to its end),
/// run on a thread of its own while the calling task waits without holding a thread.
///
/// Swift's tasks share a pool of one thread per core. Tests run all at once in one process, so a
/// test that blocks one of those threads for a second stalls every other test as long, and
/// servers under test see their clients go quiet (a request head arriving in pieces seconds
/// apart is cut off by the server's timeout). `DispatchQueue.global()` is no way out: on Linux
/// its threads are that same pool. A queue of its own is served by a thread of its own (serial
/// queues overcommit).
public func offThePool<Result: Sendable>(_ work: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue(label: "offThePool").async { continuation.resume(with: Swift.Result { try work() }) }
    }
}

/// `work`, which blocks, started on a thread of its own and not waited for: cleaning up after a
/// test (stopping a server, reaping a process), from a `deinit` or a `defer` that cannot wait.
public func offThePoolLater(_ work: @escaping @Sendable () -> Void) {
    DispatchQueue(label: "offThePoolLater").async(execute: work)
}
