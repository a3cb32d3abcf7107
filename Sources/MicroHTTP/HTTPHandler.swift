/// What a handler answers: a response now, or work whose result is sent when it completes.
public enum Reply: Sendable {
    case response(Response)
    case prepared(PreparedResponse)
    /// The connection waits (no thread does) until the work returns its response. The work runs
    /// in a task of its own that prefers `executor`, else `BlockingTaskExecutor.shared`: work
    /// that is mostly an actor's names that actor's executor, and goes to and from it with no
    /// thread woken (docs/ARCHITECTURE.md, "Who runs where").
    case deferred(@Sendable () async -> PreparedResponse, on: (any TaskExecutor)? = nil)
    /// A body written over time; see `ResponseStream`.
    case stream(ResponseStream)
}

/// Requests the server answers itself, before or instead of the handler.
public enum Rejection: Sendable, Equatable {
    /// The body of `method path` is larger than `ServerConfiguration.maxBodySize`.
    case bodyTooLarge(limit: Int, method: String, path: String)
    /// The server is stopping and will not start new work.
    case shuttingDown
    /// The request's framing is ambiguous or incomplete (several or conflicting Content-Length
    /// headers, Content-Length with Transfer-Encoding, HTTP/1.1 without Host): answered 400,
    /// and the connection is closed, since where the next request starts is unknown.
    case malformed(reason: String, method: String, path: String)
    /// A `Transfer-Encoding` other than chunked (RFC 9112 §6.1: 501); the connection is closed,
    /// since where the body ends is unknown.
    case unknownTransferCoding(String, method: String, path: String)
}

/// Answers requests. Called on the server's threads (libmicrohttpd's, the acceptor's, the read
/// loops'), so it must never block: hand slow or actor-bound work back as `.deferred`.
public protocol HTTPHandler: Sendable {
    func respond(to request: borrowing Request) -> Reply
    /// The response for a request the server rejects itself. The default is plain text.
    func respond(to rejection: Rejection) -> Response
    /// Whether a `GET` of `path` may be answered with a stream. Such a request, first on its
    /// connection, is read by the server's acceptor, and a stream it is answered with is held
    /// outside libmicrohttpd, for a fraction of the memory (docs/ARCHITECTURE.md); any other
    /// answer is left to libmicrohttpd, which asks the handler again. The default is no.
    func mayStream(_ path: Substring) -> Bool
    /// Whether `method` (`GET`, `HEAD` or `POST`) of `path` is always answered with a response —
    /// now (`.prepared`, `.response`) or by deferred work (`.deferred`) — never streamed. Such
    /// requests, on a connection where every request so far was one, are read and answered by the
    /// server's read loops, outside libmicrohttpd (docs/ARCHITECTURE.md); the first other request
    /// sends the connection to libmicrohttpd. The default is no.
    func answersWithoutStream(method: String, path: String) -> Bool
    /// The largest body `method path` may have, when it is not `ServerConfiguration.maxBodySize`
    /// (an upload's): a larger declared one is refused (413) before it is read. Asked only of
    /// requests with a body. The default is nil.
    func bodyLimit(method: String, path: String) -> Int?
}

extension HTTPHandler {
    public func mayStream(_ path: Substring) -> Bool { false }

    public func answersWithoutStream(method: String, path: String) -> Bool { false }

    public func bodyLimit(method: String, path: String) -> Int? { nil }

    public func respond(to rejection: Rejection) -> Response {
        switch rejection {
        case .bodyTooLarge(let limit, _, _):
            Response(
                status: 413, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                body: Array("request body larger than \(limit) bytes\n".utf8))
        case .shuttingDown:
            Response(
                status: 503, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                body: Array("server is shutting down\n".utf8))
        case .malformed(let reason, _, _):
            Response(
                status: 400, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                body: Array("\(reason)\n".utf8))
        case .unknownTransferCoding(let coding, _, _):
            Response(
                status: 501, headers: [HTTPHeader("Content-Type", "text/plain; charset=utf-8")],
                body: Array("transfer coding '\(coding)' is not supported; send chunked or Content-Length\n".utf8))
        }
    }
}
