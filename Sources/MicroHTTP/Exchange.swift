import Locking

/// What libmicrohttpd keeps in a connection's `req_cls` slot for one request, from its first
/// access-handler call to the request-completed notification.
///
/// Most requests (reads without a body) never need more than "the headers are in", which the
/// `headersReceived` marker says without allocating; an `Exchange` object (retained through
/// `Unmanaged`) is made only for a request with a body or one answered by deferred work.
enum RequestSlot {
    /// Not a real pointer: an address no allocation can have (objects are 16-byte aligned).
    static var headersReceived: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }
}

/// A request with a body, or one waiting on deferred work.
///
/// `body`, `receivedBytes` and `rejected` are only touched by the connection's own worker
/// thread, which libmicrohttpd never changes for a connection; `completion` crosses threads.
final class Exchange: @unchecked Sendable {
    var body: [UInt8] = []
    /// Body bytes received, including those dropped once the body exceeded the cap.
    var receivedBytes = 0
    /// A response was already queued before the body arrived (a declared oversize body).
    var rejected = false
    /// The answer of deferred work, set just before the connection is resumed. Its own lock,
    /// not the dispatcher's: one writer, then one reader, so it is never contended.
    let completion = Lock<PreparedResponse?>(nil)
}
