import CMicroHTTPD
import Glibc
import Synchronization
import Threading

/// Runs each request through its lifecycle (`RequestSlot`: first call, upload calls, final call,
/// completion; docs/ARCHITECTURE.md) and answers it through the handler: at once, after deferred
/// work (`DeferredAnswers`), or as a stream (`StreamRegistry`). It is what libmicrohttpd's
/// callbacks reach through their `cls` pointer, kept apart from `HTTPServer` so that they never
/// touch an object that is being deinitialised. Every method here runs on the worker thread of
/// the connection it is given.
final class Dispatcher: Sendable {
    let handler: any HTTPHandler
    let maxBodySize: Int
    let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    let watchdog: ConnectionWatchdog
    let deferred = DeferredAnswers()
    let streams: StreamRegistry
    /// Bytes past the cap of a body without a declared length read (and dropped) after its 413
    /// was written, for the client to stop sending and read it, before the connection is cut.
    static let discardLimit = 1 << 20
    /// Requests between their first handler call and their completion notification. Each
    /// connection marks its own request in its watchdog entry, which only its worker thread
    /// writes: a shared count would be written twice by every request on every core.
    var activeRequests: Int { watchdog.connectionsInRequest }

    init(
        handler: any HTTPHandler, streams: StreamRegistry, maxBodySize: Int, requestTimeoutSeconds: Int,
        clock: ServerClock = .system,
        errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    ) {
        self.handler = handler
        self.streams = streams
        self.maxBodySize = maxBodySize
        self.errorLog = errorLog
        watchdog = ConnectionWatchdog(timeoutSeconds: requestTimeoutSeconds, clock: clock)
    }

    // MARK: The access handler's calls

    /// First call: headers are in, no body yet. Nothing may be queued here without losing
    /// keep-alive (docs/ARCHITECTURE.md, first call) — except to refuse an ambiguous request or a
    /// declared oversize body, where closing the connection is what we want anyway.
    func begin(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>,
        version: UnsafePointer<CChar>?, slot: RequestSlot
    ) -> MHD_Result {
        slot.headersArrived()
        withWatch(of: connection) { watch in
            watch.inRequest.store(true, ordering: .relaxed)
            watchdog.waitForRequest(watch)  // the headers are in; now the body
        }
        let declaredLength = MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, "Content-Length")
        var targetLength = -1
        var encodedNUL = false
        withWatch(of: connection) { watch in
            targetLength = watch.targetLength.load(ordering: .relaxed)
            encodedNUL = watch.pathHasEncodedNUL.load(ordering: .relaxed)
        }
        let headers = HeaderCensus(of: connection)
        if let problem = Self.framingProblem(
            headers, path: path, targetLength: targetLength, encodedNUL: encodedNUL, version: version)
        {
            let rejection: Rejection =
                switch problem {
                case .malformed(let reason):
                    .malformed(reason: reason, method: String(cString: method), path: String(cString: path))
                case .unknownTransferCoding(let coding):
                    .unknownTransferCoding(coding, method: String(cString: method), path: String(cString: path))
                }
            return refuse(slot.exchange(bodyLimit: maxBodySize), rejection, on: connection)
        }
        // No body: the busiest case, asked nothing more (the census read the headers once already).
        guard headers.contentLengths > 0 || headers.transferEncoding != nil else { return .YES }
        let limit = handler.bodyLimit(method: methodName(method), path: String(cString: path)) ?? maxBodySize
        let declared = declaredLength.flatMap { Int(String(cString: $0)) }
        if let declared, declared > limit {
            return refuseOversize(slot.exchange(bodyLimit: limit), method: method, path: path, on: connection)
        }
        if limit != maxBodySize {
            let exchange = slot.exchange(bodyLimit: limit)
            if let declared { exchange.reserveBody(declared) }
        }
        return .YES
    }

    private enum FramingProblem {
        case malformed(String)
        case unknownTransferCoding(String)
    }

    /// What libmicrohttpd 0.9.75 lets through but RFC 9112 says to refuse, or a proxy in front of
    /// us may read differently (request smuggling): several Content-Length headers, or one with
    /// Transfer-Encoding; a header name with a space before its colon (libmicrohttpd keeps it as
    /// another name, so `Content-Length : 5` framed nothing and its body was read as the next
    /// request); a transfer coding other than chunked (libmicrohttpd waited for the connection to
    /// close); several Host headers, or none in HTTP/1.1; several Origin or Sec-Fetch-Site; a NUL
    /// in the target (libmicrohttpd's C string ends there, so `/healthz%00/../banner` sent raw was
    /// read as `/healthz`), sent raw or as `%00` in the path (decoded into one: `/tokens%00x` was
    /// answered as `/tokens`, a way around a proxy's rules for paths).
    private static func framingProblem(
        _ headers: HeaderCensus, path: UnsafePointer<CChar>, targetLength: Int, encodedNUL: Bool,
        version: UnsafePointer<CChar>?
    ) -> FramingProblem? {
        if let name = headers.invalidName {
            return .malformed("header name '\(name)' is not a token (a space before the colon?)")
        }
        if headers.contentLengths > 1 { return .malformed("several Content-Length headers; send exactly one") }
        if headers.contentLengths == 1 && headers.transferEncoding != nil {
            return .malformed("both Content-Length and Transfer-Encoding; send one of them")
        }
        if let coding = headers.transferEncoding, coding.lowercased() != "chunked" {
            return .unknownTransferCoding(coding)
        }
        if headers.hosts > 1 { return .malformed("several Host headers; send exactly one") }
        // Who sent a request is judged from these (the admin page's loopback trust, CORS): with
        // two, whichever one is read decides, and a client may put the harmless one first.
        if headers.origins > 1 { return .malformed("several Origin headers; send at most one") }
        if headers.fetchSites > 1 { return .malformed("several Sec-Fetch-Site headers; send at most one") }
        if let version, strcmp(version, "HTTP/1.1") == 0, headers.hosts == 0 {
            return .malformed("HTTP/1.1 request without a Host header")
        }
        // The target as received ends where the version begins (libmicrohttpd wrote a NUL over
        // the space between them, ConnectionWatchdog.Watch.targetLength); a C string that ends
        // sooner ended at a NUL the client sent.
        if let version, version.pointee != 0, targetLength >= 0, path + targetLength + 1 != version {
            return .malformed("a NUL byte in the request target")
        }
        if encodedNUL { return .malformed("an encoded NUL (%00) in the request path") }
        return nil
    }

    /// One pass over the request's headers: what `framingProblem` needs to know.
    private struct HeaderCensus {
        var contentLengths = 0
        var hosts = 0
        var origins = 0
        var fetchSites = 0
        var transferEncoding: String?
        var invalidName: String?

        init(of connection: OpaquePointer) {
            withUnsafeMutablePointer(to: &self) { census in
                _ = MHD_get_connection_values(
                    connection, MHD_ValueKind.HEADER_KIND,
                    { context, _, key, value in
                        guard let context, let key else { return .YES }
                        let census = context.assumingMemoryBound(to: HeaderCensus.self)
                        census.pointee.count(name: key, value: value)
                        return .YES
                    }, census)
            }
        }

        private mutating func count(name: UnsafePointer<CChar>, value: UnsafePointer<CChar>?) {
            if strcasecmp(name, "Content-Length") == 0 {
                contentLengths += 1
            } else if strcasecmp(name, "Host") == 0 {
                hosts += 1
            } else if strcasecmp(name, "Origin") == 0 {
                origins += 1
            } else if strcasecmp(name, "Sec-Fetch-Site") == 0 {
                fetchSites += 1
            } else if strcasecmp(name, "Transfer-Encoding") == 0 {
                let coding = value.map { String(cString: $0) } ?? ""
                transferEncoding = transferEncoding.map { "\($0), \(coding)" } ?? coding
            } else if invalidName == nil && !Self.isToken(name) {
                invalidName = String(cString: name)
            }
        }

        private static func isToken(_ name: UnsafePointer<CChar>) -> Bool {
            var index = 0
            while name[index] != 0 {
                guard RequestHead.isTokenByte(UInt8(bitPattern: name[index])) else { return false }
                index += 1
            }
            return index > 0
        }
    }

    /// An upload call: a piece of the body. It is kept while the body fits under the cap. A body
    /// without a declared length (chunked) can only be found too large while it arrives, when
    /// libmicrohttpd accepts no response: its 413 is written on the socket at once, with
    /// `Connection: close`; the rest is dropped as it comes, the client reading the answer
    /// meanwhile (curl stops sending), and the connection closed at the body's end — or after
    /// `discardLimit` more bytes, long after the answer was there to read.
    func receive(
        _ data: UnsafePointer<CChar>, count: Int, slot: RequestSlot, on connection: OpaquePointer,
        method: UnsafePointer<CChar>, path: UnsafePointer<CChar>
    ) -> MHD_Result {
        let exchange = slot.exchange(bodyLimit: maxBodySize)
        switch exchange.phase {
        case .refused: return .YES  // answered already; the rest is ignored
        case .answeredOnTheSocket:
            _ = exchange.append(UnsafeRawBufferPointer(start: data, count: count))
            return exchange.receivedBytes - exchange.bodyLimit <= Self.discardLimit ? .YES : .NO
        default:
            guard !exchange.append(UnsafeRawBufferPointer(start: data, count: count)) else { return .YES }
            let rejection = Rejection.bodyTooLarge(
                limit: exchange.bodyLimit, method: String(cString: method), path: String(cString: path))
            var response = handler.respond(to: rejection)
            response.headers.append(HTTPHeader("Connection", "close"))
            let answer = PreparedResponse(response).wireBytes
            let descriptor = cmhd_connection_descriptor(connection)
            // An empty send buffer takes a problem's few hundred bytes whole; a socket that does
            // not (the client gone) is closed at once.
            guard descriptor >= 0, DirectWrite.write(answer, to: descriptor) == answer.count else { return .NO }
            exchange.answeredOnTheSocket()
            return .YES
        }
    }

    /// The final call: the whole request is in — or deferred work resumed the connection. Answers it.
    func finish(
        _ connection: OpaquePointer, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, slot: RequestSlot
    ) -> MHD_Result {
        withWatch(of: connection) { watchdog.answering($0) }
        var body: [UInt8] = []
        if case .exchange(let exchange) = slot.state {
            switch exchange.phase {
            case .refused: return .YES
            // Answered; closing now leaves nothing unread to reset the connection with.
            case .answeredOnTheSocket: return .NO
            case .answerReady(let answer): return queue(answer, on: connection)
            case .awaitingAnswer: preconditionFailure("a suspended request was called before its resume")
            case .receivingBody:
                body = exchange.body
            }
        }
        var query = QueryString(bytes: [])
        withWatch(of: connection) { query = $0.query.withLock { $0 } }
        let request = Request(
            method: methodName(method), path: String(cString: path), body: body, connection: connection, query: query)
        switch handler.respond(to: request) {
        case .prepared(let prepared):
            return queue(prepared, on: connection)
        case .response(let response):
            return queue(PreparedResponse(response), on: connection)
        case .deferred(let work, let executor):
            guard
                deferred.suspend(
                    slot.exchange(bodyLimit: maxBodySize), on: connection, until: work, runningOn: executor)
            else {
                return refuseWhileStopping(connection)
            }
            return .YES
        case .stream(let stream):
            return streams.start(stream, on: connection) ?? refuseWhileStopping(connection)
        }
    }

    /// The completion notification: libmicrohttpd is done with the request (answered, failed, or
    /// the client left).
    func complete(_ slot: RequestSlot, on connection: OpaquePointer?) {
        slot.complete()
        // The next request's clock.
        guard let connection else { return }
        withWatch(of: connection) { watch in
            watch.inRequest.store(false, ordering: .relaxed)
            watchdog.waitForRequest(watch)
        }
    }

    // MARK: Stopping

    /// Ends every stream and refuses new ones.
    func finishAllStreams() { streams.finishAll() }

    /// Answers every request waiting on deferred work with 503 and refuses new deferred work,
    /// so that libmicrohttpd can be stopped.
    func resumeAllForShutdown() { deferred.resumeAll(with: PreparedResponse(handler.respond(to: .shuttingDown))) }

    // MARK: Helpers

    /// `body` with the connection's watchdog entry, from libmicrohttpd's socket context, not
    /// retained: the context holds it until the connection's close notification.
    private func withWatch(of connection: OpaquePointer, _ body: (ConnectionWatchdog.Watch) -> Void) {
        guard let context = cmhd_connection_context(connection) else { return }
        Unmanaged<ConnectionWatchdog.Watch>.fromOpaque(context)._withUnsafeGuaranteedRef(body)
    }

    /// Answers the request with the handler's response to `rejection`; the rest of it is ignored.
    private func refuse(_ exchange: Exchange, _ rejection: Rejection, on connection: OpaquePointer) -> MHD_Result {
        exchange.refuse()
        return queue(PreparedResponse(handler.respond(to: rejection)), on: connection)
    }

    private func refuseOversize(
        _ exchange: Exchange, method: UnsafePointer<CChar>, path: UnsafePointer<CChar>, on connection: OpaquePointer
    ) -> MHD_Result {
        let rejection = Rejection.bodyTooLarge(
            limit: exchange.bodyLimit, method: String(cString: method), path: String(cString: path))
        return refuse(exchange, rejection, on: connection)
    }

    private func refuseWhileStopping(_ connection: OpaquePointer) -> MHD_Result {
        queue(PreparedResponse(handler.respond(to: .shuttingDown)), on: connection)
    }

    private func queue(_ response: PreparedResponse, on connection: OpaquePointer) -> MHD_Result {
        MHD_queue_response(connection, UInt32(response.status), response.handle)
    }
}
