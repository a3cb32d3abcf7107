import CMicroHTTPD
import Glibc
import Platform
import Threading

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
///
/// A subscription on a fresh connection is not held by libmicrohttpd at all but on a socket of
/// the `Acceptor`'s (`OwnSocket`): `send` writes there, what the socket cannot take is queued
/// (framed) and written when the acceptor sees it writable, and a hang-up is seen at once.
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
        /// Set while the stream is held on the acceptor's socket; its queue holds framed chunks.
        var socket: OwnSocket?
        var isClosed = false
    }

    /// A socket the `Acceptor` holds, and what to tell it once this stream has closed the socket.
    struct OwnSocket: Sendable {
        let descriptor: Int32
        let closed: @Sendable () -> Void
    }

    /// The last chunk of a chunked body.
    private static let lastChunk = Array("0\r\n\r\n".utf8)

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
        send(FramedChunk(chunk))
    }

    /// `send`, for a chunk framed once for many streams (a broadcast).
    func send(_ chunk: FramedChunk) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            if state.socket != nil { return Self.send(chunk, onOwnSocket: &state, limit: maxQueuedBytes) }
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
            // libmicrohttpd frames what its content reader hands over.
            let queued = state.queue.enqueue(chunk.bytes, limit: maxQueuedBytes)
            // Queued, or just cut off for being too slow: either way the reader has work.
            if queued || !wasFinished { Self.wake(&state) }
            return queued
        }
    }

    /// Ends the body once what is queued has been sent.
    public func finish() {
        state.withLock { state in
            guard !state.queue.isFinished, !state.isClosed else { return }
            if state.socket != nil {
                _ = state.queue.enqueue(Self.lastChunk, limit: .max)
                state.queue.finish()
                Self.flush(&state)
                return
            }
            state.queue.finish()
            Self.wake(&state)
        }
    }

    /// Whether the stream is held on the acceptor's socket rather than inside libmicrohttpd.
    public var isOnOwnSocket: Bool {
        state.withLock { $0.socket != nil }
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

    // MARK: Held on the acceptor's socket

    /// Takes over `socket`, on which the request was read: writes `head` (status line and
    /// headers), then what was queued before, framed.
    func attach(to socket: OwnSocket, head: [UInt8]) {
        state.withLock { state in
            precondition(state.connection == nil && state.socket == nil, "a stream is attached once")
            // One write for the head and what was queued (a subscriber's first event).
            var first = head
            for chunk in state.queue.takeAll() { first += DirectWrite.frame(chunk) }
            if state.queue.isFinished { first += Self.lastChunk }
            var queue = StreamQueue()
            _ = queue.enqueue(first, limit: .max)
            if state.queue.isFinished { queue.finish() }
            state.queue = queue
            state.socket = socket
            Self.flush(&state)
        }
    }

    /// The acceptor saw the socket writable: what is queued goes out.
    func socketIsWritable() {
        state.withLock { Self.flush(&$0) }
    }

    /// The acceptor saw input. A subscriber sends nothing after its request: what it sends is
    /// read and dropped; the end of its input is a hang-up.
    func socketIsReadable() {
        state.withLock { state in
            guard let socket = state.socket else { return }
            var scratch = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
            while true {
                let read = systemCall {
                    withUnsafeMutableBytes(of: &scratch) { buffer in
                        recv(socket.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
                    }
                }
                switch read {
                case .success(let count) where count > 0: continue
                case .failure(let error) where error.wouldBlock: return
                default:  // the end of its input, or a failed socket
                    Self.closeOwnSocket(&state)
                    return
                }
            }
        }
    }

    /// The acceptor saw the client hang up, or is stopping: the socket is closed.
    func socketHungUp() {
        state.withLock { Self.closeOwnSocket(&$0) }
    }

    private static func send(_ chunk: FramedChunk, onOwnSocket state: inout State, limit: Int) -> Bool {
        // Only the descriptor: a copy of the whole `OwnSocket` would retain its closure per event.
        guard !state.queue.isFinished, let descriptor = state.socket?.descriptor else { return false }
        if state.queue.isEmpty {
            let sent = DirectWrite.write(chunk.frame, to: descriptor)
            if sent == chunk.frame.count { return true }
            guard sent >= 0 else {
                closeOwnSocket(&state)
                return false
            }
            // The socket is full now: the acceptor hears when it drains (edge-triggered EPOLLOUT).
            _ = state.queue.enqueue(sent == 0 ? chunk.frame : Array(chunk.frame[sent...]), limit: .max)
            return true
        }
        guard state.queue.enqueue(chunk.frame, limit: limit) else {
            closeOwnSocket(&state)  // too slow to read: cut off; it reconnects and starts afresh
            return false
        }
        return true
    }

    /// Writes what is queued, as far as the socket takes it; closes the socket once a finished
    /// stream is all written, or when the socket failed.
    private static func flush(_ state: inout State) {
        guard let socket = state.socket else { return }
        let written = state.queue.drain { DirectWrite.write($0, to: socket.descriptor) }
        if !written || (state.queue.isEmpty && state.queue.isFinished) { closeOwnSocket(&state) }
    }

    /// Closes the socket under the stream's lock, so that no `send` can write to its number once
    /// another connection reuses it; the acceptor then takes the stream out of the registry.
    private static func closeOwnSocket(_ state: inout State) {
        guard let socket = state.socket else { return }
        Glibc.close(socket.descriptor)
        state.socket = nil
        state.isClosed = true
        state.queue.discard()
        socket.closed()
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
