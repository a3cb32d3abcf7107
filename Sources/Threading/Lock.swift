import Glibc
import Platform

/// A value behind a mutual-exclusion lock, on `pthread_mutex_t`.
///
/// Why not `Synchronization.Mutex`: on Linux it is a bare futex that ThreadSanitizer cannot see,
/// so every access it guards would be reported as a race and `make test-sanitize` would check
/// nothing. ThreadSanitizer intercepts pthread mutexes, and uncontended they cost the same.
///
/// Every pthread call's result is checked, as swift-nio's `NIOLock` does: a failure is a bug
/// (a destroyed or corrupted mutex), so it stops the process with the error's name rather than
/// leaving the state unguarded. Debug builds use an error-checking mutex, so that taking the lock
/// again on the thread that holds it crashes at once instead of hanging forever.
public final class Lock<State>: @unchecked Sendable {
    /// Behind a pointer rather than a stored `var`: the mutex already makes access exclusive, and
    /// a `var` would make every `withLock` pay Swift's dynamic exclusivity check as well (a
    /// thread-local access set, on the read path; docs/PERFORMANCE.md).
    private let state: UnsafeMutablePointer<State>
    /// Heap-allocated so that it never moves: a pthread mutex must keep its address.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ state: State) {
        self.state = .allocate(capacity: 1)
        self.state.initialize(to: state)
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        check(pthread_mutexattr_init(&attributes), "pthread_mutexattr_init")
        #if DEBUG
            check(
                pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK)), "pthread_mutexattr_settype")
        #endif
        check(pthread_mutex_init(mutex, &attributes), "pthread_mutex_init")
        check(pthread_mutexattr_destroy(&attributes), "pthread_mutexattr_destroy")
    }

    deinit {
        check(pthread_mutex_destroy(mutex), "pthread_mutex_destroy")
        mutex.deinitialize(count: 1)
        mutex.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Runs `body` with exclusive access to the state. Keep it short, and never call back into
    /// code that takes the same lock (a debug build stops there with EDEADLK).
    public func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure)
        -> Result
    {
        check(pthread_mutex_lock(mutex), "pthread_mutex_lock")
        defer { check(pthread_mutex_unlock(mutex), "pthread_mutex_unlock") }
        return try body(&state.pointee)
    }
}

/// Stops the process when a pthread call failed; its result is the error number (never errno).
@inline(__always)
private func check(_ result: Int32, _ call: StaticString) {
    guard result == 0 else {
        fatalError("\(call) failed: \(Errno(result)) (\(result))")
    }
}
