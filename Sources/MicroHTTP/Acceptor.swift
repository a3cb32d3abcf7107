import CMicroHTTPD
import Glibc
import Locking

/// Accepts every connection on the server's port and sorts it by its first request
/// (docs/ARCHITECTURE.md, "Event streams outside libmicrohttpd"): a subscription to an event stream
/// is answered here and its socket kept here, everything else is handed to libmicrohttpd
/// untouched (`MHD_add_connection`; the request was only peeked at).
///
/// Why: libmicrohttpd gives each connection a memory pool of `connectionMemoryLimit` (16 KiB)
/// for its whole life, which made an idle subscriber cost 15 KiB; held here, it costs a socket
/// and a `ResponseStream`.
///
/// One thread of its own (`LoopThread`) runs an epoll loop over the listening socket, connections
/// whose first request is not complete yet, and the streams' sockets (edge-triggered: writable
/// again, or hung up). Everything in `Loop` belongs to that thread; others only reach it through
/// `ended`, under a lock, and the wake-up eventfd.
final class Acceptor: @unchecked Sendable {
    private let listenDescriptor: Int32
    private let epoll: Int32
    private let wakeUp: Int32
    /// The daemon connections are handed to; valid until `stop` returns.
    private let daemon: OpaquePointer
    private let handler: any HTTPHandler
    private let streams: StreamRegistry
    private let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    private let connectionLimit: Int
    private let headTimeout: Duration
    private let shared = Lock(Shared())

    private struct Shared {
        /// Streams that closed their socket, for the loop to take out of the registry.
        var ended: [UInt64] = []
        var stopping = false
        var thread: LoopThread?
    }

    /// How many bytes of a subscription's head are read before it is left to libmicrohttpd.
    static let headLimit = 8192
    private static let listenToken: UInt64 = 0
    private static let wakeUpToken: UInt64 = 1

    init(
        listening: ListenSocket, daemon: OpaquePointer, handler: any HTTPHandler, streams: StreamRegistry,
        configuration: ServerConfiguration
    ) throws(HTTPServerError) {
        listenDescriptor = listening.descriptor
        self.daemon = daemon
        self.handler = handler
        self.streams = streams
        errorLog = configuration.errorLog
        connectionLimit = configuration.connectionLimit
        headTimeout = .seconds(max(configuration.connectionTimeoutSeconds, 1))
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeUp = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard epoll >= 0, wakeUp >= 0,
            Self.watch(listenDescriptor, token: Self.listenToken, events: EPOLLIN.rawValue, on: epoll),
            Self.watch(wakeUp, token: Self.wakeUpToken, events: EPOLLIN.rawValue, on: epoll)
        else {
            let code = errno
            if epoll >= 0 { close(epoll) }
            if wakeUp >= 0 { close(wakeUp) }
            throw .cannotListen(host: configuration.host, port: configuration.port, errno: code)
        }
    }

    /// Starts the loop on a thread of its own.
    func start() {
        let thread = LoopThread { [self] in
            var loop = Loop()
            run(&loop)
        }
        shared.withLock { $0.thread = thread }
    }

    /// Stops accepting, closes every connection not handed over yet and every stream's socket
    /// (streams should have been finished first), and returns when the loop has ended.
    func stop() {
        let first = shared.withLock { shared in
            defer { shared.stopping = true }
            return !shared.stopping
        }
        guard first else { return }
        signalWakeUp()
        shared.withLock { $0.thread }?.join()
        close(listenDescriptor)
        close(epoll)
        close(wakeUp)
    }

    // MARK: The loop (the acceptor's thread only)

    private struct Loop {
        var nextToken: UInt64 = 2
        /// Connections whose first request is not complete yet.
        var waiting: [UInt64: WaitingConnection] = [:]
        var streams: [UInt64: ResponseStream] = [:]
        /// Where heads are peeked into.
        var buffer = [UInt8](repeating: 0, count: Acceptor.headLimit)
        /// While `accept` fails for want of descriptors: when to try again.
        var acceptPausedUntil: ContinuousClock.Instant?
        var lastDescriptorWarning: ContinuousClock.Instant?
    }

    private struct WaitingConnection {
        let descriptor: Int32
        let address: sockaddr_storage
        let addressLength: socklen_t
        let deadline: ContinuousClock.Instant
    }

    private func run(_ loop: inout Loop) {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while true {
            let timeout = loop.waiting.isEmpty && loop.acceptPausedUntil == nil ? -1 : 250
            let count = epoll_wait(epoll, &events, Int32(events.count), Int32(timeout))
            if count < 0 {
                if errno == EINTR { continue }
                errorLog?(.warning, "the acceptor stopped: epoll_wait failed: \(String(cString: strerror(errno)))")
                break
            }
            for event in events[0..<Int(count)] {
                switch event.data.u64 {
                case Self.listenToken: acceptAll(&loop)
                case Self.wakeUpToken: drainWakeUp()
                case let token: handle(event.events, token: token, &loop)
                }
            }
            takeOutEnded(&loop)
            if shared.withLock({ $0.stopping }) { break }
            expire(&loop)
        }
        for connection in loop.waiting.values { close(connection.descriptor) }
        loop.waiting.removeAll()
        for stream in loop.streams.values { stream.socketHungUp() }
        takeOutEnded(&loop)
    }

    private func acceptAll(_ loop: inout Loop) {
        guard loop.acceptPausedUntil == nil else { return }
        while true {
            var address = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let descriptor = withUnsafeMutablePointer(to: &address) { storage in
                storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    cmhd_accept(listenDescriptor, $0, &length)
                }
            }
            guard descriptor >= 0 else {
                switch errno {
                case EINTR, ECONNABORTED: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The listening socket stays readable: stop watching it for a moment rather
                    // than spin, and say (once a minute at most) which limit to raise.
                    let reason = String(cString: strerror(errno))
                    if loop.lastDescriptorWarning.map({ $0 + .seconds(60) < .now }) ?? true {
                        loop.lastDescriptorWarning = .now
                        errorLog?(
                            .warning,
                            "cannot accept connections: \(reason); open connections use every descriptor allowed: "
                                + "raise the open-file limit (ulimit -n) or lower --max-connections")
                    }
                    _ = epoll_ctl(epoll, EPOLL_CTL_DEL, listenDescriptor, nil)
                    loop.acceptPausedUntil = .now + .milliseconds(250)
                    return
                default: return  // EAGAIN: all accepted
                }
            }
            guard loop.waiting.count + loop.streams.count < connectionLimit else {
                close(descriptor)  // as libmicrohttpd does at its limit
                continue
            }
            let token = loop.nextToken
            loop.nextToken += 1
            guard
                Self.watch(
                    descriptor, token: token, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue,
                    on: epoll)
            else {
                close(descriptor)
                continue
            }
            loop.waiting[token] = WaitingConnection(
                descriptor: descriptor, address: address, addressLength: length, deadline: .now + headTimeout)
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
        let received = loop.buffer.withUnsafeMutableBytes { buffer in
            recv(connection.descriptor, buffer.baseAddress, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        }
        if received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) { return }
        guard received > 0 else {
            forget(token, &loop)  // the client left before sending a request
            return
        }
        let sorting = loop.buffer.withUnsafeBytes { buffer in
            RequestHead.sort(
                UnsafeRawBufferPointer(rebasing: buffer[0..<received]), limit: Self.headLimit,
                isStreamPath: handler.mayStream)
        }
        switch sorting {
        case .needMore:
            return
        case .other:
            handOver(token, &loop)
        case .subscription(let head):
            subscribe(token, head: head, &loop)
        }
    }

    private func subscribe(_ token: UInt64, head: RequestHead, _ loop: inout Loop) {
        let connection = loop.waiting[token]!
        let isLoopback = withUnsafePointer(to: connection.address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { cmhd_address_is_loopback($0) != 0 }
        }
        let request = Request(
            method: "GET", path: head.query.isEmpty ? head.path : "\(head.path)?\(head.query)", headers: head.headers,
            fromLoopback: isLoopback)
        guard case .stream(let stream) = handler.respond(to: request) else {
            handOver(token, &loop)  // libmicrohttpd asks the handler again and sends its answer
            return
        }
        // Take the head off the socket: it is all there, it was peeked.
        var taken = 0
        while taken < head.length {
            let count = loop.buffer.withUnsafeMutableBytes { buffer in
                recv(connection.descriptor, buffer.baseAddress, head.length - taken, Int32(MSG_DONTWAIT))
            }
            guard count > 0 || (count < 0 && errno == EINTR) else {
                streams.closed(stream)  // the client left: out of the registry the handler put it in
                forget(token, &loop)
                return
            }
            taken += max(count, 0)
        }
        loop.waiting[token] = nil
        loop.streams[token] = stream
        let socket = ResponseStream.OwnSocket(descriptor: connection.descriptor) { [self] in ended(token) }
        let events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        guard Self.watch(connection.descriptor, token: token, events: events, on: epoll, modify: true),
            streams.start(stream, on: socket, head: Self.responseHead(of: stream))
        else {
            // Not attached (the server is stopping): the socket is still ours to close.
            loop.streams[token] = nil
            streams.closed(stream)
            close(connection.descriptor)
            return
        }
    }

    /// Gives a waiting connection to libmicrohttpd, its request unread.
    private func handOver(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting.removeValue(forKey: token) else { return }
        _ = epoll_ctl(epoll, EPOLL_CTL_DEL, connection.descriptor, nil)
        let added = withUnsafePointer(to: connection.address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                MHD_add_connection(daemon, connection.descriptor, $0, connection.addressLength)
            }
        }
        // On failure libmicrohttpd has closed the socket (at its connection limit, or stopping).
        if added != .YES {
            errorLog?(.notice, "libmicrohttpd refused a connection: \(String(cString: strerror(errno)))")
        }
    }

    private func forget(_ token: UInt64, _ loop: inout Loop) {
        guard let connection = loop.waiting.removeValue(forKey: token) else { return }
        close(connection.descriptor)
    }

    /// Closes connections that have not sent a whole request within the timeout; resumes
    /// accepting after a pause.
    private func expire(_ loop: inout Loop) {
        let now = ContinuousClock.now
        for (token, connection) in loop.waiting where connection.deadline < now { forget(token, &loop) }
        if let until = loop.acceptPausedUntil, until < now {
            loop.acceptPausedUntil = nil
            _ = Self.watch(listenDescriptor, token: Self.listenToken, events: EPOLLIN.rawValue, on: epoll)
            acceptAll(&loop)
        }
    }

    // MARK: From other threads

    /// A stream closed its socket (on whatever thread): the loop takes it out of the registry,
    /// which must not happen inside a broadcast, where the registry's lock is held.
    private func ended(_ token: UInt64) {
        shared.withLock { $0.ended.append(token) }
        signalWakeUp()
    }

    private func takeOutEnded(_ loop: inout Loop) {
        let ended = shared.withLock { shared in
            defer { shared.ended.removeAll() }
            return shared.ended
        }
        for token in ended {
            if let stream = loop.streams.removeValue(forKey: token) { streams.closed(stream) }
        }
    }

    private func signalWakeUp() {
        var one: UInt64 = 1
        _ = write(wakeUp, &one, MemoryLayout<UInt64>.size)
    }

    private func drainWakeUp() {
        var count: UInt64 = 0
        _ = read(wakeUp, &count, MemoryLayout<UInt64>.size)
    }

    // MARK: Helpers

    private static func watch(
        _ descriptor: Int32, token: UInt64, events: UInt32, on epoll: Int32, modify: Bool = false
    ) -> Bool {
        var event = epoll_event(events: events, data: epoll_data_t(u64: token))
        return epoll_ctl(epoll, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, descriptor, &event) == 0
    }

    /// The status line and headers of `stream`'s response, as libmicrohttpd would write them:
    /// `Date`, chunked transfer coding, headers with a CR or LF left out.
    static func responseHead(of stream: ResponseStream) -> [UInt8] {
        let reason = MHD_get_reason_phrase_for(UInt32(stream.status)).map { String(cString: $0) } ?? ""
        var head = "HTTP/1.1 \(stream.status) \(reason)\r\n"
        var date = [CChar](repeating: 0, count: 40)
        let dateLength = cmhd_http_date(&date, date.count)
        if dateLength > 0 {
            head += "Date: \(String(decoding: date[0..<dateLength].map(UInt8.init(bitPattern:)), as: UTF8.self))\r\n"
        }
        for header in stream.headers where !"\(header.name)\(header.value)".contains(where: \.isNewline) {
            head += "\(header.name): \(header.value)\r\n"
        }
        head += "Transfer-Encoding: chunked\r\n\r\n"
        return Array(head.utf8)
    }
}
