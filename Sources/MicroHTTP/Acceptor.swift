import CMicroHTTPD
import Glibc
import Platform
import Threading

/// Accepts every connection on the server's port and sorts it by its first request
/// (docs/ARCHITECTURE.md, "Event streams outside libmicrohttpd", "Reads outside libmicrohttpd"):
/// a subscription to an event stream is answered here and its socket kept here, a read the
/// handler answers at once goes to a `ReadLoop`, everything else is handed to libmicrohttpd
/// untouched (`MHD_add_connection`; the request was only peeked at).
///
/// Why: libmicrohttpd gives each connection a memory pool of `connectionMemoryLimit` (16 KiB)
/// for its whole life, which made an idle subscriber cost 15 KiB; held here, it costs a socket
/// and a `ResponseStream`.
///
/// Its `EventLoop` (the thread `http-acceptor`) waits on the listening socket, connections whose
/// first request is not complete yet, and the streams' sockets (edge-triggered: writable again, or
/// hung up). Everything in `Loop` belongs to that thread; others only reach it through `ended`,
/// under a lock, and the wake-up.
final class Acceptor: @unchecked Sendable {
    private let listenDescriptor: Int32
    private let eventLoop: EventLoop
    private var epoll: WakeableEpoll { eventLoop.epoll }
    /// The daemon connections are handed to; valid until `stop` returns.
    private let daemon: OpaquePointer
    private let handler: any HTTPHandler
    private let streams: StreamRegistry
    /// Where reads answered at once go, in turn; none when the server keeps every connection in
    /// libmicrohttpd (a per-address connection limit, which only libmicrohttpd enforces).
    private let readLoops: [ReadLoop]
    private let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    private let connectionLimit: Int
    /// Nanoseconds on `clock` a connection has for its whole first request.
    private let headTimeout: Int64
    private let clock: ServerClock
    /// The manual clock's hold on the loop: each move wakes it to look at its deadlines.
    private let clockObserver: Int
    /// libmicrohttpd's memory per connection: a head that might not fit it is left to it.
    private let poolSize: Int
    /// The largest body the server takes: a larger one is libmicrohttpd's to refuse.
    private let maxBodySize: Int
    /// Streams that closed their socket, for the loop to take out of the registry.
    private let ended = Lock<[UInt64]>([])

    /// How many bytes of a subscription's head are read before it is left to libmicrohttpd.
    static let headLimit = 8192
    private static let listenToken: UInt64 = 0

    init(
        listening: ListenSocket, daemon: OpaquePointer, handler: any HTTPHandler, streams: StreamRegistry,
        readLoops: [ReadLoop], configuration: ServerConfiguration
    ) throws(HTTPServerError) {
        listenDescriptor = listening.descriptor
        self.daemon = daemon
        self.handler = handler
        self.streams = streams
        self.readLoops = readLoops
        errorLog = configuration.errorLog
        connectionLimit = configuration.connectionLimit
        headTimeout = Int64(max(configuration.connectionTimeoutSeconds, 1)) * 1_000_000_000
        clock = configuration.clock
        poolSize = configuration.connectionMemoryLimit
        maxBodySize = configuration.maxBodySize
        do {
            eventLoop = try EventLoop(name: "http-acceptor", errorLog: configuration.errorLog)
        } catch {
            throw .cannotListen(host: configuration.host, port: configuration.port, errno: error.errno)
        }
        guard eventLoop.epoll.watch(listenDescriptor, token: Self.listenToken, events: EPOLLIN.rawValue) else {
            let code = errno
            eventLoop.stop()
            throw .cannotListen(host: configuration.host, port: configuration.port, errno: code)
        }
        clockObserver = clock.observe { [epoll = eventLoop.epoll] in epoll.signal() }
    }

    /// Starts the loop on its thread.
    func start() {
        eventLoop.start(
            makeState: { Loop() },
            timeout: { loop in loop.waiting.isEmpty && loop.acceptPausedUntil == nil ? -1 : 250 },
            turn: { [self] loop, events in turn(events, &loop) },
            finish: { [self] loop in finish(&loop) })
    }

    /// Stops accepting, closes every connection not handed over yet and every stream's socket
    /// (streams should have been finished first), and returns when the loop has ended.
    func stop() {
        clock.stopObserving(clockObserver)
        guard eventLoop.stop() else { return }
        close(listenDescriptor)
    }

    // MARK: The loop (the acceptor's thread only)

    private struct Loop {
        var nextToken: UInt64 = 2
        /// Connections whose first request is not complete yet.
        var waiting: [UInt64: WaitingConnection] = [:]
        var streams: [UInt64: ResponseStream] = [:]
        /// Where heads are peeked into.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Acceptor.headLimit, alignment: 16)
        /// The read loop the next read goes to.
        var nextReadLoop = 0
        /// While `accept` fails for want of descriptors: when to try again.
        var acceptPausedUntil: ContinuousClock.Instant?
        var lastDescriptorWarning: ContinuousClock.Instant?
    }

    private struct WaitingConnection {
        let descriptor: Int32
        let peer: PeerAddress
        /// On `clock`, in nanoseconds.
        let deadline: Int64
    }

    private func turn(_ events: ArraySlice<epoll_event>, _ loop: inout Loop) {
        for event in events {
            switch event.data.u64 {
            case Self.listenToken: acceptAll(&loop)
            case let token: handle(event.events, token: token, &loop)
            }
        }
        takeOutEnded(&loop)
        expire(&loop)
    }

    private func finish(_ loop: inout Loop) {
        for connection in loop.waiting.values { close(connection.descriptor) }
        loop.waiting.removeAll()
        for stream in loop.streams.values { stream.socketHungUp() }
        takeOutEnded(&loop)
        loop.buffer.deallocate()
    }

    private func acceptAll(_ loop: inout Loop) {
        guard loop.acceptPausedUntil == nil else { return }
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let accepted = systemCall {
                withUnsafeMutablePointer(to: &address) { storage in
                    storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        cmhd_accept(listenDescriptor, $0, &length)
                    }
                }
            }
            guard case .success(let descriptor) = accepted else {
                guard case .failure(let error) = accepted else { return }
                switch error.code {
                case ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The listening socket stays readable: stop watching it for a moment rather
                    // than spin, and say (once a minute at most) which limit to raise.
                    let reason = error.description
                    if loop.lastDescriptorWarning.map({ $0 + .seconds(60) < .now }) ?? true {
                        loop.lastDescriptorWarning = .now
                        errorLog?(
                            .warning,
                            "cannot accept connections: \(reason); open connections use every descriptor allowed: "
                                + "raise the open-file limit (ulimit -n) or lower --max-connections")
                    }
                    epoll.forget(listenDescriptor)
                    loop.acceptPausedUntil = .now + .milliseconds(250)
                    return
                default: return  // EAGAIN: all accepted
                }
            }
            let elsewhere = readLoops.connectionsHeld
            guard loop.waiting.count + loop.streams.count + elsewhere < connectionLimit else {
                close(descriptor)  // as libmicrohttpd does at its limit
                continue
            }
            let token = loop.nextToken
            loop.nextToken += 1
            guard
                epoll.watch(descriptor, token: token, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue)
            else {
                close(descriptor)
                continue
            }
            loop.waiting[token] = WaitingConnection(
                descriptor: descriptor, peer: PeerAddress(storage: address, length: length),
                deadline: clock.now() + headTimeout)
            // The request may be there already: a peek now saves a trip through epoll.
            sort(token, &loop)
        }
    }

    private func handle(_ events: UInt32, token: UInt64, _ loop: inout Loop) {
        if loop.waiting[token] != nil {
            sort(token, &loop)
        } else if let stream = loop.streams[token] {
            if events & (EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0 {
                stream.socketHungUp()
            } else {
                if events & EPOLLIN.rawValue != 0 { stream.socketIsReadable() }
                if events & EPOLLOUT.rawValue != 0 { stream.socketIsWritable() }
            }
        }
    }

    /// Reads what has arrived of a waiting connection's first request (without taking it) and
    /// decides, once it can, who answers it.
    private func sort(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting[token] else { return }
        let peeked = systemCall {
            recv(connection.descriptor, loop.buffer.baseAddress, loop.buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        }
        if case .failure(let error) = peeked, error.wouldBlock { return }  // the next edge brings it
        guard case .success(let received) = peeked, received > 0 else {
            forget(token, &loop)  // the client left before sending a request (or its socket failed)
            return
        }
        let bytes = UnsafeRawBufferPointer(rebasing: loop.buffer[..<received])
        switch RequestHead.parse(bytes, limit: loop.buffer.count, poolSize: poolSize, maxBodySize: maxBodySize) {
        case .needMore:
            return
        case .other:
            handOver(token, &loop)
        case .plain(let head):
            let path = head.pathText
            if head.method == .get && handler.mayStream(path[...]) {
                subscribe(token, head: head, path: path, &loop)
            } else if !readLoops.isEmpty && handler.answersWithoutStream(method: head.method.rawValue, path: path) {
                giveToReadLoop(token, &loop)
            } else {
                handOver(token, &loop)
            }
        }
    }

    private func subscribe(_ token: UInt64, head: RequestHead, path: String, _ loop: inout Loop) {
        let connection = loop.waiting[token]!
        let request = Request(head, path: path, fromLoopback: connection.peer.isLoopback, sending: .streamsOnly)
        guard case .stream(let stream) = handler.respond(to: request) else {
            handOver(token, &loop)  // libmicrohttpd asks the handler again and sends its answer
            return
        }
        // Take the head off the socket: it is all there, it was peeked.
        guard recv(connection.descriptor, nil, head.length, Int32(MSG_TRUNC | MSG_DONTWAIT)) == head.length else {
            streams.closed(stream)  // the client left: out of the registry the handler put it in
            forget(token, &loop)
            return
        }
        loop.waiting[token] = nil
        loop.streams[token] = stream
        let socket = ResponseStream.OwnSocket(descriptor: connection.descriptor) { [self] in ended(token) }
        let events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        guard epoll.watch(connection.descriptor, token: token, events: events, modify: true),
            streams.start(stream, on: socket, head: Self.responseHead(of: stream))
        else {
            // Not attached (the server is stopping): the socket is still ours to close.
            loop.streams[token] = nil
            streams.closed(stream)
            close(connection.descriptor)
            return
        }
    }

    /// Gives a waiting connection to the next read loop, its request unread.
    private func giveToReadLoop(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting.removeValue(forKey: token) else { return }
        epoll.forget(connection.descriptor)
        let readLoop = readLoops[loop.nextReadLoop]
        loop.nextReadLoop = (loop.nextReadLoop + 1) % readLoops.count
        readLoop.adopt(connection.descriptor, isLoopback: connection.peer.isLoopback)
    }

    /// Gives a waiting connection to libmicrohttpd, its request unread.
    private func handOver(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting.removeValue(forKey: token) else { return }
        epoll.forget(connection.descriptor)
        connection.peer.handOver(connection.descriptor, to: daemon, errorLog: errorLog)
    }

    private func forget(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting.removeValue(forKey: token) else { return }
        close(connection.descriptor)
    }

    /// Closes connections that have not sent a whole request within the timeout; resumes
    /// accepting after a pause.
    private func expire(_ loop: inout Loop) {
        let now = clock.now()
        for (token, connection) in loop.waiting where connection.deadline < now { forget(token, &loop) }
        if let until = loop.acceptPausedUntil, until < .now {
            loop.acceptPausedUntil = nil
            _ = epoll.watch(listenDescriptor, token: Self.listenToken, events: EPOLLIN.rawValue)
            acceptAll(&loop)
        }
    }

    // MARK: From other threads

    /// A stream closed its socket (on whatever thread): the loop takes it out of the registry,
    /// which must not happen inside a broadcast, where the registry's lock is held.
    private func ended(_ token: UInt64) {
        ended.withLock { $0.append(token) }
        epoll.signal()
    }

    private func takeOutEnded(_ loop: inout Loop) {
        let tokens = ended.withLock { ended in
            defer { ended.removeAll() }
            return ended
        }
        for token in tokens {
            if let stream = loop.streams.removeValue(forKey: token) { streams.closed(stream) }
        }
    }

    // MARK: Helpers

    /// The status line and headers of `stream`'s response, as libmicrohttpd would write them:
    /// `Date`, chunked transfer coding, headers with a CR or LF left out.
    static func responseHead(of stream: ResponseStream) -> [UInt8] {
        let head =
            WireHead.statusLine(stream.status) + WireHead.dateLine() + WireHead.headerLines(stream.headers)
            + "Transfer-Encoding: chunked\r\n\r\n"
        return Array(head.utf8)
    }
}
