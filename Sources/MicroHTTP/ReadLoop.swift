import CMicroHTTPD
import Glibc
import Platform
import Synchronization
import Threading

/// Answers keep-alive requests outside libmicrohttpd (docs/ARCHITECTURE.md, "Reads outside
/// libmicrohttpd"). The `Acceptor` gives a loop each connection whose first request is a plain
/// `GET`, `HEAD` or `POST` (`RequestHead`) of a path the handler answers without a stream
/// (`HTTPHandler.answersWithoutStream`). The loop peeks at each request, asks the handler, writes its
/// answer with one `sendmsg` and only then takes the request off the socket — until a request
/// comes that is anything else: the connection then goes to libmicrohttpd with that request
/// unread, and stays there. A request answered by deferred work (a command) is taken off the
/// socket at once; its connection waits here, nothing more read from it, until the work's answer
/// comes back through the inbox and is written.
///
/// Why: per request, libmicrohttpd clears the connection's 16 KiB memory pool, parses every
/// header into it and builds the response head again; a read of a pre-built response needs none
/// of that (docs/PERFORMANCE.md). A connection held here costs its socket and a slot in a table.
///
/// One thread per loop (`LoopThread`), one edge-triggered epoll. Everything in `Loop` belongs to
/// that thread (its `EventLoop`, `http-read-N`); the acceptor reaches it only through `adopt` (the
/// inbox, under a lock) and `stop` (the wake-up).
final class ReadLoop: @unchecked Sendable {
    private let eventLoop: EventLoop
    private var epoll: WakeableEpoll { eventLoop.epoll }
    /// The daemon connections are handed to; valid until the server stops the daemon, after this loop.
    private let daemon: OpaquePointer
    private let handler: any HTTPHandler
    private let streams: StreamRegistry
    /// Nanoseconds on `clock` a connection may stay idle, or take over a request.
    private let idleTimeout: Int64
    private let clock: ServerClock
    /// The manual clock's hold on the loop: each move wakes it to look at its connections.
    private let clockObserver: Int
    private let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    /// libmicrohttpd's memory per connection: a head that might not fit it is left to it.
    private let poolSize: Int
    /// The largest body the server takes: a larger one is libmicrohttpd's to refuse.
    private let maxBodySize: Int
    /// Connections held here now: the acceptor counts them against the connection limit.
    let connectionCount = Atomic<Int>(0)
    private let inbox = Lock(Inbox())

    /// Whether `inbox` holds answers of deferred work: read on every turn without the lock.
    private let hasAnswers = Atomic<Bool>(false)

    /// Connections given by the acceptor, not yet taken into the loop's table, and answers of
    /// deferred work; closed once the loop has ended (a connection given later is closed at once,
    /// an answer dropped: its connection was answered and closed by `finish`).
    private struct Inbox {
        var adopted: [Adopted] = []
        var answers: [DeferredAnswer] = []
        var isClosed = false
    }

    /// What deferred work answered the request of connection `serial` on `descriptor`: the
    /// serial tells a connection from a later one given the same descriptor number.
    private struct DeferredAnswer {
        let descriptor: Int32
        let serial: UInt64
        let response: PreparedResponse
    }

    private struct Adopted {
        let descriptor: Int32
        let isLoopback: Bool
    }

    init(
        number: Int, daemon: OpaquePointer, handler: any HTTPHandler, streams: StreamRegistry,
        configuration: ServerConfiguration
    ) throws(HTTPServerError) {
        poolSize = configuration.connectionMemoryLimit
        maxBodySize = configuration.maxBodySize
        self.daemon = daemon
        self.handler = handler
        self.streams = streams
        idleTimeout = Int64(max(configuration.connectionTimeoutSeconds, 1)) * 1_000_000_000
        clock = configuration.clock
        errorLog = configuration.errorLog
        do {
            eventLoop = try EventLoop(name: "http-read-\(number)", errorLog: configuration.errorLog)
        } catch {
            throw .cannotListen(host: configuration.host, port: configuration.port, errno: error.errno)
        }
        clockObserver = clock.observe { [epoll = eventLoop.epoll] in epoll.signal() }
    }

    func start() {
        eventLoop.start(
            makeState: { [clock] in Loop(now: clock.now()) }, timeout: { _ in 1000 },
            turn: { [self] loop, events in
                loop.now = clock.now()
                for event in events {
                    handle(event.events, descriptor: Int32(truncatingIfNeeded: event.data.u64), &loop)
                }
                if hasAnswers.load(ordering: .acquiring) { deliverAnswers(&loop) }
                if loop.now - loop.lastSweep >= 1_000_000_000 { closeIdle(&loop) }
            },
            finish: { [self] loop in finish(&loop) })
    }

    /// Takes a connection whose first request has arrived (peeked, not read). On the acceptor's thread.
    func adopt(_ descriptor: Int32, isLoopback: Bool) {
        // Each answer leaves as soon as it is written: Nagle's algorithm would hold a file's last,
        // partial segment until the client acknowledged the one before (nginx's `tcp_nodelay`;
        // docs/PERFORMANCE.md, "Images with sendfile").
        var noDelay: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        let adopted = inbox.withLock { inbox in
            guard !inbox.isClosed else { return false }
            inbox.adopted.append(Adopted(descriptor: descriptor, isLoopback: isLoopback))
            connectionCount.add(1, ordering: .relaxed)
            // Added under the lock, after the inbox: the loop finds it there on its first event.
            let events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
            guard epoll.watch(descriptor, token: UInt64(descriptor), events: events) else {
                inbox.adopted.removeLast()
                connectionCount.subtract(1, ordering: .relaxed)
                return false
            }
            return true
        }
        if !adopted { close(descriptor) }
    }

    /// Answers no more requests and closes every connection held here; returns when the loop has
    /// ended. A request being answered is answered first. Also for a loop never started.
    func stop() {
        clock.stopObserving(clockObserver)
        eventLoop.stop()
    }

    // MARK: The loop (its thread only)

    private struct Loop {
        /// By descriptor.
        var connections: [Connection?] = []
        /// Where requests are peeked into.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Acceptor.headLimit, alignment: 16)
        let date = DateLine()
        /// When the loop last woke up, on `clock` (nanoseconds): the time every connection's
        /// activity is stamped with.
        var now: Int64
        var lastSweep: Int64
        /// The serial the next connection taken gets.
        var nextSerial: UInt64 = 0

        init(now: Int64) {
            self.now = now
            lastSweep = now
        }
    }

    /// Kept small: the table is indexed by descriptor, so it has a slot for every descriptor
    /// number up to the highest held (the client's address is asked for again at hand-over).
    private struct Connection {
        let isLoopback: Bool
        let serial: UInt64
        /// When the last answer went, or the request being received began (the timeout's start).
        var lastActive: Int64
        /// Whether part of a request has arrived.
        var isReceiving = false
        /// What a write left unsent: nothing more is read until it has gone.
        var unsent: Unsent?
        /// Deferred work is making the answer to its request: nothing more is read until it is sent.
        var isWaiting = false
        /// That request was a `HEAD`: its answer goes without its body.
        var waitsForHead = false
        /// Its last answer says `Connection: close`: closed once that answer has gone.
        var closesAfterAnswer = false
    }

    /// The rest of an answer the socket did not take at once: what is left of the head, copied
    /// (a few hundred bytes), and of the body, still read from its response — a 100 KB image is
    /// not copied once more for a slow reader. A class: a connection's slot stays one pointer wide.
    private final class Unsent {
        var head: [UInt8]
        let response: PreparedResponse?
        var bodyOffset: Int

        init(head: [UInt8], response: PreparedResponse?, bodyOffset: Int) {
            self.head = head
            self.response = response
            self.bodyOffset = bodyOffset
        }

        var body: UnsafeRawBufferPointer {
            guard let response else { return UnsafeRawBufferPointer(start: nil, count: 0) }
            return UnsafeRawBufferPointer(rebasing: response.wireBody[bodyOffset...])
        }

        /// Takes `sent` bytes off the front; true when nothing is left.
        func consume(_ sent: Int) -> Bool {
            if sent <= head.count {
                head.removeFirst(sent)
            } else {
                bodyOffset += sent - head.count
                head = []
            }
            return head.isEmpty && body.isEmpty
        }
    }

    private func finish(_ loop: inout Loop) {
        takeInbox(&loop, closing: true)  // adopted too late: closed with the rest
        deliverAnswers(&loop)
        // Work still running is not waited for: its request is answered as libmicrohttpd answers
        // the ones it suspended (`Dispatcher.resumeAllForShutdown`), and its answer dropped.
        let stopping = PreparedResponse(handler.respond(to: .shuttingDown))
        for (descriptor, connection) in loop.connections.enumerated() where connection?.isWaiting == true {
            _ = deliver(stopping, withBody: !connection!.waitsForHead, to: Int32(descriptor), &loop)
        }
        for descriptor in loop.connections.indices where loop.connections[descriptor] != nil {
            closeConnection(Int32(descriptor), &loop)
        }
        loop.buffer.deallocate()
    }

    private func handle(_ events: UInt32, descriptor: Int32, _ loop: inout Loop) {
        if !isHeld(descriptor, loop) { takeInbox(&loop) }
        guard isHeld(descriptor, loop) else { return }  // closed earlier in this batch
        if events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            closeConnection(descriptor, &loop)  // deferred work's answer then finds no one
        } else if loop.connections[Int(descriptor)]!.isWaiting {
            return  // its next request is read once the one before is answered
        } else if loop.connections[Int(descriptor)]!.unsent != nil {
            if events & EPOLLOUT.rawValue != 0 && flush(descriptor, &loop) { answered(descriptor, &loop) }
        } else {
            serve(descriptor, &loop)
        }
    }

    /// An answer has gone whole: the connection closes when it said so, else its next request,
    /// which may have arrived meanwhile with no new edge to say so, is served.
    private func answered(_ descriptor: Int32, _ loop: inout Loop) {
        if loop.connections[Int(descriptor)]!.closesAfterAnswer {
            closeConnection(descriptor, &loop)
        } else {
            serve(descriptor, &loop)
        }
    }

    private func isHeld(_ descriptor: Int32, _ loop: Loop) -> Bool {
        Int(descriptor) < loop.connections.count && loop.connections[Int(descriptor)] != nil
    }

    /// Takes the connections given since the last time; `closing`, for good (the loop has ended).
    private func takeInbox(_ loop: inout Loop, closing: Bool = false) {
        let given = inbox.withLock { inbox in
            defer {
                inbox.adopted.removeAll()
                inbox.isClosed = inbox.isClosed || closing
            }
            return inbox.adopted
        }
        for adopted in given {
            let index = Int(adopted.descriptor)
            if index >= loop.connections.count {
                loop.connections += Array(repeating: nil, count: index + 1 - loop.connections.count)
            }
            loop.connections[index] = Connection(
                isLoopback: adopted.isLoopback, serial: loop.nextSerial, lastActive: loop.now)
            loop.nextSerial += 1
        }
    }

    /// Answers every whole request that has arrived, as long as each is a read answered at once.
    private func serve(_ descriptor: Int32, _ loop: inout Loop) {
        while true {
            let received: Int
            switch systemCall({
                recv(descriptor, loop.buffer.baseAddress, loop.buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
            }) {
            case .success(let count): received = count
            case .failure(let error):
                if !error.wouldBlock { closeConnection(descriptor, &loop) }
                return
            }
            guard received > 0 else {
                closeConnection(descriptor, &loop)  // the client is done
                return
            }
            let bytes = UnsafeRawBufferPointer(rebasing: loop.buffer[..<received])
            switch RequestHead.parse(bytes, limit: loop.buffer.count, poolSize: poolSize, maxBodySize: maxBodySize) {
            case .needMore:
                // The request's first bytes start its clock, as the idle time ends: the timeout
                // allows as much again for the rest of its head (docs/CONFIGURATION.md).
                if !loop.connections[Int(descriptor)]!.isReceiving {
                    loop.connections[Int(descriptor)]!.isReceiving = true
                    loop.connections[Int(descriptor)]!.lastActive = loop.now
                }
                return  // the rest raises the next edge
            case .other:
                handOver(descriptor, &loop)
                return
            case .plain(let head):
                let path = head.pathText
                guard handler.answersWithoutStream(method: head.method.rawValue, path: path) else {
                    handOver(descriptor, &loop)
                    return
                }
                // Another request may wait behind this one: in the bytes peeked, or, when they
                // filled the buffer, still in the socket (no new edge would announce it).
                guard answer(head, path: path, on: descriptor, &loop),
                    received > head.length || received == loop.buffer.count
                else { return }
            }
        }
    }

    /// Answers `head`, then takes it off the socket; or, when deferred work answers it, takes it
    /// off and leaves the connection waiting for that answer. False when the connection is no
    /// longer being read here (closed, handed over, waiting, or output waiting).
    private func answer(_ head: RequestHead, path: String, on descriptor: Int32, _ loop: inout Loop) -> Bool {
        let isLoopback = loop.connections[Int(descriptor)]!.isLoopback
        let response: PreparedResponse
        switch handler.respond(to: Request(head, path: path, fromLoopback: isLoopback, sending: .answers)) {
        case .prepared(let prepared): response = prepared
        case .response(let plain): response = PreparedResponse(plain)
        case .deferred(let work, let executor):
            guard take(head, from: descriptor, &loop) else { return false }
            wait(for: work, on: executor, descriptor: descriptor, head: head.isHead, &loop)
            return false
        case .stream(let stream):
            // Not a route the handler streams (`answersWithoutStream`): libmicrohttpd asks it again.
            streams.closed(stream)
            handOver(descriptor, &loop)
            return false
        }
        if response.closesConnection && head.method != .post {
            // `Connection: close` to a read: libmicrohttpd answers it again and closes the
            // connection as it should (reading what else the client sent, so that no reset takes
            // the answer away). A report has had its effect: answered here, then closed.
            handOver(descriptor, &loop)
            return false
        }
        guard take(head, from: descriptor, &loop) else { return false }
        loop.connections[Int(descriptor)]!.closesAfterAnswer = response.closesConnection
        guard deliver(response, withBody: !head.isHead, to: descriptor, &loop) else { return false }
        if response.closesConnection {
            closeConnection(descriptor, &loop)
            return false
        }
        return true
    }

    /// Takes the request `head` off the socket: it is all there, it was peeked. False when the
    /// connection failed (and is closed).
    private func take(_ head: RequestHead, from descriptor: Int32, _ loop: inout Loop) -> Bool {
        guard recv(descriptor, nil, head.length, Int32(MSG_TRUNC | MSG_DONTWAIT)) == head.length else {
            closeConnection(descriptor, &loop)
            return false
        }
        return true
    }

    /// Runs `work` off this thread (it may block: a store write), the connection waiting; its
    /// answer comes back through the inbox (`deliverAnswers`).
    private func wait(
        for work: @escaping @Sendable () async -> PreparedResponse, on executor: (any TaskExecutor)?,
        descriptor: Int32, head: Bool, _ loop: inout Loop
    ) {
        loop.connections[Int(descriptor)]!.isWaiting = true
        loop.connections[Int(descriptor)]!.waitsForHead = head
        loop.connections[Int(descriptor)]!.lastActive = loop.now
        let serial = loop.connections[Int(descriptor)]!.serial
        DeferredAnswers.run(work, on: executor) { [self] response in
            let answer = DeferredAnswer(descriptor: descriptor, serial: serial, response: response)
            // One wake-up for answers that come before the loop takes them: under load, most
            // find others waiting, and a write on the eventfd is a system call each.
            let wakes = inbox.withLock { inbox in
                guard !inbox.isClosed else { return false }
                inbox.answers.append(answer)
                hasAnswers.store(true, ordering: .releasing)
                return inbox.answers.count == 1
            }
            if wakes { epoll.signal() }
        }
    }

    /// Writes the answers deferred work has made, each to its connection if it is still the one
    /// that waits (a client that left has had its descriptor closed, maybe given to another).
    private func deliverAnswers(_ loop: inout Loop) {
        let answers = inbox.withLock { inbox in
            defer {
                inbox.answers.removeAll()
                hasAnswers.store(false, ordering: .relaxed)
            }
            return inbox.answers
        }
        for answer in answers {
            let index = Int(answer.descriptor)
            guard index < loop.connections.count, let connection = loop.connections[index],
                connection.serial == answer.serial, connection.isWaiting
            else { continue }
            loop.connections[index]!.isWaiting = false
            loop.connections[index]!.closesAfterAnswer = answer.response.closesConnection
            if deliver(answer.response, withBody: !connection.waitsForHead, to: answer.descriptor, &loop) {
                answered(answer.descriptor, &loop)
            }
        }
    }

    /// Writes `response` (its `Date` from the loop's clock) with one `sendmsg`, or, for a body in
    /// a file, its head with one and the body with `sendfile`; what the socket does not take
    /// now waits for it to be writable.
    private func deliver(
        _ response: PreparedResponse, withBody: Bool, to descriptor: Int32, _ loop: inout Loop
    ) -> Bool {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        let body = withBody ? response.wireBody : none
        let file = body.isEmpty ? nil : response.bodyFile
        let parts = (response.statusLine, loop.date.line, response.headerLines, file == nil ? body : none)
        let headCount = parts.0.count + parts.1.count + parts.2.count
        var sent = Self.send(parts, to: descriptor, more: file != nil)
        if let file, sent == headCount {
            let bodySent = Self.send(file, from: 0, count: body.count, to: descriptor)
            sent = bodySent < 0 ? -1 : sent + bodySent
        }
        guard sent >= 0 else {
            closeConnection(descriptor, &loop)
            return false
        }
        loop.connections[Int(descriptor)]!.lastActive = loop.now
        loop.connections[Int(descriptor)]!.isReceiving = false
        guard sent < headCount + body.count else { return true }
        var head: [UInt8] = []
        var skip = sent
        for part in [parts.0, parts.1, parts.2] {
            if skip >= part.count {
                skip -= part.count
            } else {
                head += part[skip...]
                skip = 0
            }
        }
        loop.connections[Int(descriptor)]!.unsent = Unsent(
            head: head, response: body.isEmpty ? nil : response, bodyOffset: max(0, sent - headCount))
        return false
    }

    private typealias Parts = (
        UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer, UnsafeRawBufferPointer
    )

    /// `sendmsg` of `parts` (`more`: the rest of the answer follows at once, so the kernel waits
    /// for it to fill the packet): the bytes sent (0 when the socket is full), or -1 when the
    /// connection failed. A tuple, not an array: a read allocates nothing.
    private static func send(_ parts: Parts, to descriptor: Int32, more: Bool = false) -> Int {
        func vector(_ part: UnsafeRawBufferPointer) -> iovec {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: part.baseAddress), iov_len: part.count)
        }
        var vectors = (vector(parts.0), vector(parts.1), vector(parts.2), vector(parts.3))
        let flags = Int32(MSG_NOSIGNAL | MSG_DONTWAIT) | (more ? Int32(MSG_MORE) : 0)
        return withUnsafeMutableBytes(of: &vectors) { raw in
            var message = msghdr()
            message.msg_iov = raw.baseAddress!.assumingMemoryBound(to: iovec.self)
            message.msg_iovlen = 4
            switch systemCall({ sendmsg(descriptor, &message, flags) }) {
            case .success(let sent): return sent
            case .failure(let error): return error.wouldBlock ? 0 : -1
            }
        }
    }

    /// `sendfile` of `count` bytes of `file` from `offset`, for as long as the socket takes them:
    /// the bytes sent (fewer when it is full), or -1 when the connection failed.
    private static func send(_ file: Int32, from offset: Int, count: Int, to descriptor: Int32) -> Int {
        var position = off_t(offset)
        while position < offset + count {
            switch systemCall({ sendfile(descriptor, file, &position, offset + count - Int(position)) }) {
            case .success(let sent) where sent > 0: continue
            case .success: return Int(position) - offset
            case .failure(let error): return error.wouldBlock ? Int(position) - offset : -1
            }
        }
        return count
    }

    /// Writes what was left unsent; true when all of it has gone.
    private func flush(_ descriptor: Int32, _ loop: inout Loop) -> Bool {
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        let unsent = loop.connections[Int(descriptor)]!.unsent!
        let file = unsent.response?.bodyFile
        var sent =
            file != nil && unsent.head.isEmpty
            ? 0
            : unsent.head.withUnsafeBytes {
                Self.send(($0, file == nil ? unsent.body : none, none, none), to: descriptor, more: file != nil)
            }
        if let file, sent == unsent.head.count {
            let bodySent = Self.send(file, from: unsent.bodyOffset, count: unsent.body.count, to: descriptor)
            sent = bodySent < 0 ? -1 : sent + bodySent
        }
        guard sent >= 0 else {
            closeConnection(descriptor, &loop)
            return false
        }
        loop.connections[Int(descriptor)]!.lastActive = loop.now
        guard unsent.consume(sent) else { return false }
        loop.connections[Int(descriptor)]!.unsent = nil
        return true
    }

    /// Gives the connection to libmicrohttpd, its next request unread.
    private func handOver(_ descriptor: Int32, _ loop: inout Loop) {
        guard loop.connections[Int(descriptor)] != nil else { return }
        guard let peer = PeerAddress(peerOf: descriptor) else {
            closeConnection(descriptor, &loop)  // the client has gone (getpeername: ENOTCONN)
            return
        }
        loop.connections[Int(descriptor)] = nil
        connectionCount.subtract(1, ordering: .relaxed)
        epoll.forget(descriptor)
        peer.handOver(descriptor, to: daemon, errorLog: errorLog)
    }

    private func closeConnection(_ descriptor: Int32, _ loop: inout Loop) {
        guard loop.connections[Int(descriptor)] != nil else { return }
        loop.connections[Int(descriptor)] = nil
        connectionCount.subtract(1, ordering: .relaxed)
        close(descriptor)  // which also takes it out of the epoll set
    }

    /// Closes connections idle (or sending a request, or not reading their answer) for longer
    /// than the connection timeout, as libmicrohttpd does.
    private func closeIdle(_ loop: inout Loop) {
        loop.lastSweep = loop.now
        for descriptor in loop.connections.indices {
            if let connection = loop.connections[descriptor], !connection.isWaiting,
                connection.lastActive + idleTimeout < loop.now
            {
                closeConnection(Int32(descriptor), &loop)
            }
        }
    }
}

/// `Date: …` and its CRLF, made again when the second changes. Owned by one loop.
private final class DateLine {
    private var second: time_t = -1
    private let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: 64, alignment: 1)
    private var count = 0

    /// Valid until the next call.
    var line: UnsafeRawBufferPointer {
        let now = time(nil)
        if now != second { make(now) }
        return UnsafeRawBufferPointer(rebasing: bytes[..<count])
    }

    private func make(_ now: time_t) {
        second = now
        let text = WireHead.dateLine()
        count = text.utf8.count
        bytes.copyBytes(from: text.utf8)
    }

    deinit { bytes.deallocate() }
}

extension [ReadLoop] {
    /// Connections these loops hold now (for the connection limit).
    var connectionsHeld: Int { reduce(0) { $0 + $1.connectionCount.load(ordering: .relaxed) } }
}
