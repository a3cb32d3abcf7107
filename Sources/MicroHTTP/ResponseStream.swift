import CMicroHTTPD
import Locking

/// A response whose body is written over time, such as Server-Sent Events: the status and
/// headers go out at once, then every chunk passed to `send`, until `finish()`, the client
/// leaving, or the server stopping.
///
/// No thread waits for it. While nothing is queued, the connection is suspended inside
/// libmicrohttpd's content reader (docs/ARCHITECTURE.md: returning 0 without suspending would
/// busy-loop). `send` then writes the chunk to the socket itself (`DirectWrite`: libmicrohttpd has
/// sent everything before it and does not touch a suspended connection), and only when the socket
/// cannot take it at once queues it and resumes the connection. A suspended connection does not
/// notice a client that hung up, so the stream learns of it at the next `send`, when the write
/// fails.
public final class ResponseStream: Sendable {
    public let status: Int
    public let headers: [HTTPHeader]
    /// A client that lets this much go unread is too slow: its stream is ended, so it reconnects
    /// and starts afresh rather than growing a backlog here.
    public let maxQueuedBytes: Int
    private let state = Lock(State())
    private let closeHandler = Lock<(@Sendable () -> Void)?>(nil)

    private struct State {
        var queue = StreamQueue()
        /// Set once the response is queued on a connection; nil again when it is closed.
        var connection: ConnectionHandle?
        var isSuspended = false
        var isClosed = false
    }

    /// The connection pointer and its socket, valid while the stream is attached and not closed
    /// (libmicrohttpd closes neither while the connection is suspended).
    struct ConnectionHandle: @unchecked Sendable {
        let pointer: OpaquePointer
        let descriptor: Int32
    }

    public init(status: Int = 200, headers: [HTTPHeader], maxQueuedBytes: Int = 256 * 1024) {
        self.status = status
        self.headers = headers
        self.maxQueuedBytes = maxQueuedBytes
    }

    /// Called once, on some thread, when the stream has ended for good (the client left, the
    /// stream finished or was cut off, or the server stopped). Set it before handing the stream
    /// to the server.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        closeHandler.withLock { $0 = handler }
    }

    /// Queues `chunk` for the client. False when the stream has ended (then nothing was queued),
    /// or when this chunk would take the backlog past `maxQueuedBytes` (then the stream ends).
    @discardableResult
    public func send(_ chunk: [UInt8]) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            if state.isSuspended, state.queue.isEmpty, !state.queue.isFinished, let connection = state.connection {
                switch DirectWrite.chunk(chunk, to: connection.descriptor) {
                case .written:
                    return true
                case .notNow:
                    break  // queued below, for libmicrohttpd to send when the socket drains
                case .cutShort:
                    state.queue.abort()
                    Self.wake(&state)
                    return false
                }
            }
            let wasFinished = state.queue.isFinished
            let queued = state.queue.enqueue(chunk, limit: maxQueuedBytes)
            // Queued, or just cut off for being too slow: either way the reader has work.
            if queued || !wasFinished { Self.wake(&state) }
            return queued
        }
    }

    /// Ends the body once what is queued has been sent.
    public func finish() {
        state.withLock { state in
            guard !state.queue.isFinished, !state.isClosed else { return }
            state.queue.finish()
            Self.wake(&state)
        }
    }

    /// True until the stream has ended.
    public var isOpen: Bool {
        state.withLock { !$0.queue.isFinished && !$0.isClosed }
    }

    /// Resumes the connection if the content reader suspended it. Called with the lock held:
    /// the reader suspends under the same lock, so a resume can never overtake its suspend.
    private static func wake(_ state: inout State) {
        guard state.isSuspended, let connection = state.connection else { return }
        state.isSuspended = false
        MHD_resume_connection(connection.pointer)
    }

    // MARK: Called by libmicrohttpd (through the dispatcher)

    /// Ties the stream to the connection its response was queued on.
    func attach(to connection: OpaquePointer) {
        let descriptor = cmhd_connection_descriptor(connection)
        state.withLock { $0.connection = ConnectionHandle(pointer: connection, descriptor: descriptor) }
    }

    /// The content reader: copies queued bytes into libmicrohttpd's buffer; with nothing queued,
    /// suspends the connection and returns 0 (libmicrohttpd then waits for `send` to resume it).
    /// 0 is returned on that path only.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        state.withLock { state in
            switch state.queue.take(into: buffer) {
            case .bytes(let count):
                return count
            case .endOfStream:
                return -1  // MHD_CONTENT_READER_END_OF_STREAM
            case .abort:
                return -2  // MHD_CONTENT_READER_END_WITH_ERROR: libmicrohttpd closes the connection
            case .waitForMore:
                guard let connection = state.connection else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
                state.isSuspended = true
                CallbackScope.assertInside("MHD_suspend_connection")
                MHD_suspend_connection(connection.pointer)
                return 0
            }
        }
    }

    /// libmicrohttpd released the response: the connection is closing or closed.
    func close() {
        state.withLock { state in
            state.isClosed = true
            state.connection = nil
            state.queue.discard()
        }
        closeHandler.withLock { handler in
            let notify = handler
            handler = nil
            return notify
        }?()
    }
}
