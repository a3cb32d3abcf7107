import Glibc

/// Marks the thread as running one of libmicrohttpd's callbacks (the access handler or a content
/// reader), so that debug builds check what libmicrohttpd allows only there: suspending a
/// connection. Release builds keep nothing.
enum CallbackScope {
    #if DEBUG
        private static let key: pthread_key_t = {
            var key = pthread_key_t()
            precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
            return key
        }()
    #endif

    /// Runs `body` marked as inside a libmicrohttpd callback.
    @inline(__always)
    static func run<Result>(_ body: () -> Result) -> Result {
        #if DEBUG
            let outer = pthread_getspecific(key)
            precondition(pthread_setspecific(key, UnsafeRawPointer(bitPattern: 1)) == 0)
            defer { precondition(pthread_setspecific(key, outer) == 0) }
        #endif
        return body()
    }

    /// Stops a debug build when called outside a libmicrohttpd callback.
    @inline(__always)
    static func assertInside(_ action: StaticString) {
        #if DEBUG
            precondition(pthread_getspecific(key) != nil, "\(action) is allowed only inside a libmicrohttpd callback")
        #endif
    }
}
