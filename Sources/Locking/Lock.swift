import Glibc

/// A value behind a mutual-exclusion lock, on `pthread_mutex_t`.
///
/// Why not `Synchronization.Mutex`: on Linux it is a bare futex that ThreadSanitizer cannot see,
/// so every access it guards would be reported as a race and `make test-sanitize` would check
/// nothing. ThreadSanitizer intercepts pthread mutexes, and uncontended they cost the same.
public final class Lock<State>: @unchecked Sendable {
    private var state: State
    /// Heap-allocated so that it never moves: a pthread mutex must keep its address.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    public init(_ state: State) {
        self.state = state
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state. Keep it short, and never call back into
    /// code that takes the same lock.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
