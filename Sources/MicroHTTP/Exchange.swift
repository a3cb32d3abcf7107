/// One request in progress on a connection, from its first access-handler call to
/// libmicrohttpd's request-completed notification. libmicrohttpd keeps it in the connection's
/// `req_cls` slot (retained through `Unmanaged`).
///
/// `body`, `receivedBytes` and `rejected` are only touched by the connection's own worker thread, which
/// libmicrohttpd never changes for a connection; `completion` crosses threads and is guarded by
/// the dispatcher's lock.
final class Exchange: @unchecked Sendable {
    let method: String
    let path: String
    var body: [UInt8] = []
    /// Body bytes received, including those dropped once the body exceeded the cap.
    var receivedBytes = 0
    /// A response was already queued before the body arrived (a declared oversize body).
    var rejected = false
    /// The answer of deferred work, set just before the connection is resumed.
    var completion: PreparedResponse?

    init(method: String, path: String) {
        self.method = method
        self.path = path
    }
}
