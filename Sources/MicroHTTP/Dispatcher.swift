import CMicroHTTPD
import Glibc
import Locking
import Synchronization

/// The state libmicrohttpd's callbacks reach through their `cls` pointer: the handler, the body
/// cap, the connection watchdog, the connections suspended while deferred work runs, and the open
/// streams. Kept apart from `HTTPServer` so the callbacks never touch an object that is being
/// deinitialised.
final class Dispatcher: Sendable {
    let handler: any HTTPHandler
    let maxBodySize: Int
    let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    let watchdog: ConnectionWatchdog
    /// Bytes of an oversize body read (and dropped) before the connection is closed instead.
    static let discardLimit = 1 << 20
    /// Requests between their first handler call and their completion notification.
    let activeRequests = Atomic<Int>(0)
    private let suspensions = Lock(Suspensions())
    private let streams = Lock(OpenStreams())

    private struct OpenStreams {
        var streams: [ObjectIdentifier: ResponseStream] = [:]
        var stopping = false
    }

    private struct Suspensions {
        var connections: [ObjectIdentifier: SuspendedConnection] = [:]
        var stopping = false
    }

    private struct SuspendedConnection: @unchecked Sendable {
        let exchange: Exchange
        /// Valid until resumed: a suspended connection is never closed by libmicrohttpd.
        let connection: OpaquePointer
    }

    /// What libmicrohttpd's content-reader callbacks get as their context.
    final class StreamBinding {
        let stream: ResponseStream
        let dispatcher: Dispatcher

        init(stream: ResponseStream, dispatcher: Dispatcher) {
            self.stream = stream
            self.dispatcher = dispatcher
        }
    }

    init(
        handler: any HTTPHandler, maxBodySize: Int, requestTimeoutSeconds: Int,
        errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    ) {
        self.handler = handler
        self.maxBodySize = maxBodySize
        self.errorLog = errorLog
        watchdog = ConnectionWatchdog(timeoutSeconds: requestTimeoutSeconds)
    }

    // MARK: Access handler steps (on the connection's worker thread)

    /// First call for a request: headers are in, no body yet. Nothing may be queued here
    /// without losing keep-alive (docs/ARCHITECTURE.md, first call) — except to refuse an ambiguous request or a
    /// declared oversize body, where closing the connection is what we want anyway.
    func begin(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>?, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        slot.pointee = RequestSlot.headersReceived
        activeRequests.add(1, ordering: .relaxed)
        watch(of: connection).map(watchdog.waitForRequest)  // the headers are in; now the body
        let declaredLength = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length")
        if let problem = Self.framingProblem(of: connection, hasLength: declaredLength != nil, version: version) {
            let rejection = Rejection.malformed(
                reason: problem, method: String(cString: method), path: String(cString: path))
            return reject(exchange(in: slot), rejection, on: connection)
        }
        if let declaredLength, let length = Int(String(cString: declaredLength)), length > maxBodySize {
            return rejectOversize(exchange(in: slot), method: method, path: path, on: connection)
        }
        return .YES
    }

    /// What libmicrohttpd 0.9.75 lets through but a proxy in front of us may read differently
    /// (request smuggling): several Content-Length headers, or one with Transfer-Encoding. Also
    /// HTTP/1.1 without Host, which RFC 9112 says to refuse.
    private static func framingProblem(
        of connection: OpaquePointer, hasLength: Bool, version: UnsafePointer<CChar>?
    ) -> String? {
        if hasLength {
            if countHeaders(named: "content-length", on: connection) > 1 {
                return "several Content-Length headers; send exactly one"
            }
            if MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Transfer-Encoding") != nil {
                return "both Content-Length and Transfer-Encoding; send one of them"
            }
        }
        if let version, strcmp(version, "HTTP/1.1") == 0,
            MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Host") == nil
        {
            return "HTTP/1.1 request without a Host header"
        }
        return nil
    }

    private static func countHeaders(named lowercaseName: String, on connection: OpaquePointer) -> Int {
        var found = (name: lowercaseName, count: 0)
        withUnsafeMutablePointer(to: &found) { context in
            _ = MHD_get_connection_values(
                connection, MHD_ValueKind.HEADER_KIND,
                { context, _, key, _ in
                    guard let context, let key else { return .YES }
                    let found = context.assumingMemoryBound(to: (name: String, count: Int).self)
                    if String(cString: key).lowercased() == found.pointee.name { found.pointee.count += 1 }
                    return .YES
                }, context)
        }
        return found.count
    }

    /// A piece of the body arrived: keep it while it fits under the cap. A body without a
    /// declared length (chunked) can only be found too large while it arrives, when
    /// libmicrohttpd no longer accepts a response: it is read to its end and discarded, then
    /// answered 413 — or, past `discardLimit`, cut off by closing the connection.
    func receive(
        _ data: UnsafePointer<CChar>, count: Int, slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        let exchange = exchange(in: slot)
        exchange.receivedBytes += count
        if exchange.receivedBytes > maxBodySize {
            exchange.body = []
            return exchange.receivedBytes > Self.discardLimit ? .NO : .YES
        }
        data.withMemoryRebound(to: UInt8.self, capacity: count) { bytes in
            exchange.body.append(contentsOf: UnsafeBufferPointer(start: bytes, count: count))
        }
        return .YES
    }

    /// The whole request is in (or deferred work resumed the connection): answer it.
    func finish(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>,
        slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    ) -> MHD_Result {
        watch(of: connection).map(watchdog.answering)
        var body: [UInt8] = []
        if let exchange = existingExchange(in: slot) {
            if exchange.rejected { return .YES }
            if exchange.receivedBytes > maxBodySize {
                return rejectOversize(exchange, method: method, path: path, on: connection)
            }
            if let completion = exchange.completion.withLock({ $0 }) {
                return queue(completion, on: connection)
            }
            body = exchange.body
        }
        let request = Request(
            method: String(cString: method), path: String(cString: path), body: body, connection: connection)
        switch handler.respond(to: request) {
        case .prepared(let prepared):
            return queue(prepared, on: connection)
        case .response(let response):
            return queue(PreparedResponse(response), on: connection)
        case .deferred(let work):
            return suspend(exchange(in: slot), on: connection, until: work)
        case .stream(let stream):
            return start(stream, on: connection)
        }
    }

    /// libmicrohttpd is done with the request (answered, failed or the client left).
    func complete(_ slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>, on connection: OpaquePointer?) {
        if let connection { watch(of: connection).map(watchdog.waitForRequest) }  // the next request's clock
        guard let raw = slot.pointee else { return }
        if raw != RequestSlot.headersReceived {
            Unmanaged<Exchange>.fromOpaque(raw).release()
        }
        slot.pointee = nil
        activeRequests.subtract(1, ordering: .relaxed)
    }

    /// The connection's watchdog entry, from libmicrohttpd's socket context.
    private func watch(of connection: OpaquePointer) -> ConnectionWatchdog.Watch? {
        cmhd_connection_context(connection).map {
            Unmanaged<ConnectionWatchdog.Watch>.fromOpaque($0).takeUnretainedValue()
        }
    }

    private func existingExchange(in slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Exchange? {
        guard let raw = slot.pointee, raw != RequestSlot.headersReceived else { return nil }
        return Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The request's `Exchange`, made (and kept in the slot) on first need.
    private func exchange(in slot: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Exchange {
        if let existing = existingExchange(in: slot) { return existing }
        let exchange = Exchange()
        slot.pointee = Unmanaged.passRetained(exchange).toOpaque()
        return exchange
    }

    // MARK: Deferred work

    private func suspend(
        _ exchange: Exchange, on connection: OpaquePointer,
        until work: @escaping @Sendable () async -> PreparedResponse
    ) -> MHD_Result {
        let accepted = suspensions.withLock { state in
            guard !state.stopping else { return false }
            MHD_suspend_connection(connection)
            state.connections[ObjectIdentifier(exchange)] = SuspendedConnection(
                exchange: exchange, connection: connection)
            return true
        }
        guard accepted else {
            return queue(PreparedResponse(handler.respond(to: .shuttingDown)), on: connection)
        }
        Task {
            let response = await work()
            self.resume(exchange, with: response)
        }
        return .YES
    }

    /// Hands the answer to the connection's thread; a no-op when `stop` answered it already.
    private func resume(_ exchange: Exchange, with response: PreparedResponse) {
        suspensions.withLock { state in
            guard let suspended = state.connections.removeValue(forKey: ObjectIdentifier(exchange)) else {
                return
            }
            exchange.completion.withLock { $0 = response }
            MHD_resume_connection(suspended.connection)
        }
    }

    /// Refuses new deferred work and answers every suspended request with 503, so that
    /// libmicrohttpd can be stopped (it must not be stopped with connections suspended).
    func resumeAllForShutdown() {
        let unavailable = PreparedResponse(handler.respond(to: .shuttingDown))
        suspensions.withLock { state in
            state.stopping = true
            for suspended in state.connections.values {
                suspended.exchange.completion.withLock { $0 = unavailable }
                MHD_resume_connection(suspended.connection)
            }
            state.connections.removeAll()
        }
    }

    // MARK: Streams

    private func start(_ stream: ResponseStream, on connection: OpaquePointer) -> MHD_Result {
        let accepted = streams.withLock { open in
            guard !open.stopping else { return false }
            open.streams[ObjectIdentifier(stream)] = stream
            return true
        }
        guard accepted else {
            stream.finish()
            return queue(PreparedResponse(handler.respond(to: .shuttingDown)), on: connection)
        }
        stream.attach(to: connection)
        _ = cmhd_disable_connection_timeout(connection)  // heartbeats find dead subscribers instead
        let binding = Unmanaged.passRetained(StreamBinding(stream: stream, dispatcher: self)).toOpaque()
        // MHD_SIZE_UNKNOWN: chunked transfer encoding; 4 KiB reads fit the connection's pool.
        guard let response = MHD_create_response_from_callback(UInt64.max, 4096, readStream, binding, releaseStream)
        else {
            Unmanaged<StreamBinding>.fromOpaque(binding).release()
            streamClosed(stream)
            return .NO
        }
        for header in stream.headers {
            _ = MHD_add_response_header(response, header.name, header.value)
        }
        let result = MHD_queue_response(connection, UInt32(stream.status), response)
        MHD_destroy_response(response)  // the connection holds its own reference until it is done
        return result
    }

    /// libmicrohttpd released a stream's response: its connection is done with it.
    func streamClosed(_ stream: ResponseStream) {
        streams.withLock { _ = $0.streams.removeValue(forKey: ObjectIdentifier(stream)) }
        stream.close()
    }

    /// Ends every open stream and refuses new ones (the first step of a graceful stop).
    func finishAllStreams() {
        let open = streams.withLock { open in
            open.stopping = true
            return Array(open.streams.values)
        }
        for stream in open { stream.finish() }
    }

    // MARK: Helpers

    /// Answers the request with the handler's response to `rejection`; the rest of it is ignored.
    private func reject(_ exchange: Exchange, _ rejection: Rejection, on connection: OpaquePointer) -> MHD_Result {
        exchange.rejected = true
        return queue(PreparedResponse(handler.respond(to: rejection)), on: connection)
    }

    private func rejectOversize(
        _ exchange: Exchange, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, on connection: OpaquePointer
    ) -> MHD_Result {
        let rejection = Rejection.bodyTooLarge(
            limit: maxBodySize, method: String(cString: method), path: String(cString: path))
        return reject(exchange, rejection, on: connection)
    }

    private func queue(_ response: PreparedResponse, on connection: OpaquePointer) -> MHD_Result {
        MHD_queue_response(connection, UInt32(response.status), response.handle)
    }
}

// MARK: - Content-reader callbacks of streams (their context is a retained StreamBinding)

private let readStream: MHD_ContentReaderCallback = { context, _, buffer, capacity in
    guard let context, let buffer else { return -2 }  // MHD_CONTENT_READER_END_WITH_ERROR
    let binding = Unmanaged<Dispatcher.StreamBinding>.fromOpaque(context).takeUnretainedValue()
    return binding.stream.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: capacity))
}

private let releaseStream: MHD_ContentReaderFreeCallback = { context in
    guard let context else { return }
    let binding = Unmanaged<Dispatcher.StreamBinding>.fromOpaque(context).takeRetainedValue()
    binding.dispatcher.streamClosed(binding.stream)
}
