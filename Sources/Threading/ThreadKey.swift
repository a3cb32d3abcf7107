import Glibc
import Platform

/// A pthread key: one pointer per thread, owned by this object (the key is deleted with it; what
/// the pointers point to is the owner's to free).
public final class ThreadKey: @unchecked Sendable {
    private let key: UnsafeMutablePointer<pthread_key_t>

    public init() {
        key = .allocate(capacity: 1)
        let created = pthread_key_create(key, nil)
        precondition(created == 0, "pthread_key_create: \(Errno(created))")
    }

    deinit {
        pthread_key_delete(key.pointee)
        key.deallocate()
    }

    /// The calling thread's pointer; nil until it set one.
    @inline(__always)
    public var value: UnsafeMutableRawPointer? { pthread_getspecific(key.pointee) }

    /// Sets the calling thread's pointer.
    public func set(_ value: UnsafeMutableRawPointer) {
        let result = pthread_setspecific(key.pointee, value)
        precondition(result == 0, "pthread_setspecific: \(Errno(result))")
    }
}
