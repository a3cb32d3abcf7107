import CMicroHTTPD
import Glibc
import Threading

/// An HTTP/1.1 server on libmicrohttpd: epoll, one worker thread per core, keep-alive, a body
/// cap, and suspend/resume for handlers that answer asynchronously. It owns the daemon: the
/// daemon starts in `init` and stops in `stop()` or, at the latest, in `deinit`.
public final class HTTPServer: @unchecked Sendable {
    /// The bound port (the real one when the configuration asked for port 0).
    public let port: Int
    public let configuration: ServerConfiguration

    private let dispatcher: Dispatcher
    private let logger: UnsafeMutablePointer<cmhd_logger>
    /// The running daemon; nil once stopped.
    private let daemon: Lock<DaemonHandle?>
    /// Accepts every connection; hands all but event-stream subscriptions and reads answered at
    /// once to the daemon. Nil without fast paths: the daemon accepts on the socket itself.
    private let acceptor: Acceptor?
    /// Answer keep-alive reads outside the daemon, one per worker thread (none without fast paths).
    private let readLoops: [ReadLoop]

    private struct DaemonHandle: @unchecked Sendable {
        let pointer: OpaquePointer
    }

    /// - Parameter streams: where the streams the handler returns are kept; pass the registry
    ///   that broadcasts to them (the server ends every stream in it when it stops).
    public init(
        configuration: ServerConfiguration, handler: any HTTPHandler, streams: StreamRegistry = StreamRegistry()
    ) throws(HTTPServerError) {
        let libraryVersion = MHD_get_version().map { String(cString: $0) } ?? "unknown"
        guard LibraryVersion.isSupported(libraryVersion) else { throw .unsupportedLibrary(found: libraryVersion) }
        guard configuration.threads >= 1, configuration.connectionLimit >= 1,
            configuration.connectionTimeoutSeconds >= 0, configuration.maxBodySize >= 0,
            configuration.connectionMemoryLimit >= 4096
        else {
            throw .invalidConfiguration(
                "threads and connectionLimit must be ≥ 1, connectionMemoryLimit ≥ 4096, "
                    + "timeouts and body size ≥ 0")
        }
        Self.raiseDescriptorLimit(toServe: configuration.connectionLimit, errorLog: configuration.errorLog)
        let socket = try ListenSocket.open(
            host: configuration.host, port: configuration.port, backlog: configuration.listenBacklog)
        self.configuration = configuration
        self.port = socket.port
        dispatcher = Dispatcher(
            handler: handler, streams: streams, maxBodySize: configuration.maxBodySize,
            requestTimeoutSeconds: configuration.connectionTimeoutSeconds, clock: configuration.clock,
            errorLog: configuration.errorLog)
        logger = .allocate(capacity: 1)

        let dispatcherPointer = Unmanaged.passRetained(dispatcher).toOpaque()
        logger.initialize(to: cmhd_logger(sink: forwardLibraryMessage, context: dispatcherPointer))
        // With fast paths the acceptor owns the listening socket and adds connections; without,
        // the daemon accepts on it (docs/ARCHITECTURE.md, "The fast paths").
        var flags =
            MHD_USE_EPOLL_INTERNAL_THREAD.rawValue | MHD_ALLOW_SUSPEND_RESUME.rawValue
            | MHD_USE_ERROR_LOG.rawValue | MHD_USE_ITC.rawValue
        if configuration.fastPaths { flags |= MHD_USE_NO_LISTEN_SOCKET.rawValue }
        if configuration.turbo { flags |= MHD_USE_TURBO.rawValue }
        var options = cmhd_daemon_options(
            flags: flags,
            thread_pool_size: UInt32(clamping: configuration.threads),
            // On a test's manual clock the watchdog alone times connections out (0: no timeout).
            connection_timeout_seconds: configuration.clock.isManual
                ? 0 : UInt32(clamping: configuration.connectionTimeoutSeconds),
            connection_limit: UInt32(clamping: configuration.connectionLimit),
            per_ip_connection_limit: UInt32(clamping: configuration.perAddressConnectionLimit),
            connection_memory_limit: configuration.connectionMemoryLimit,
            handler: handleAccess,
            handler_context: dispatcherPointer,
            completed: handleCompletion,
            completed_context: dispatcherPointer,
            connection_notified: handleConnectionNotice,
            connection_notified_context: dispatcherPointer,
            target_received: noteTarget,
            target_received_context: nil,
            listen_socket: configuration.fastPaths ? -1 : socket.descriptor,
            logger: logger)
        guard let started = cmhd_start_daemon(&options) else {
            Unmanaged<Dispatcher>.fromOpaque(dispatcherPointer).release()
            logger.deallocate()
            close(socket.descriptor)
            throw .daemonDidNotStart
        }
        // A per-address limit is libmicrohttpd's alone: then every connection goes there.
        let loopCount =
            configuration.fastPaths && configuration.perAddressConnectionLimit == 0 ? configuration.threads : 0
        var loops: [ReadLoop] = []
        do {
            for number in 0..<loopCount {
                loops.append(
                    try ReadLoop(
                        number: number, daemon: started, handler: handler, streams: streams,
                        configuration: configuration))
            }
            acceptor =
                configuration.fastPaths
                ? try Acceptor(
                    listening: socket, daemon: started, handler: handler, streams: streams, readLoops: loops,
                    configuration: configuration) : nil
        } catch {
            for readLoop in loops { readLoop.stop() }
            MHD_stop_daemon(started)
            Unmanaged<Dispatcher>.fromOpaque(dispatcherPointer).release()
            logger.deallocate()
            close(socket.descriptor)
            throw error
        }
        readLoops = loops
        daemon = Lock(DaemonHandle(pointer: started))
        for readLoop in readLoops { readLoop.start() }
        acceptor?.start()
    }

    /// Stops accepting connections, ends every stream, lets requests in progress finish (up to
    /// `shutdownGracePeriod`), answers requests still waiting on deferred work with the
    /// shutting-down rejection (up to 0.5 s more to send it), then closes every connection.
    /// Idempotent; returns when done.
    public func stop() {
        daemon.withLock { handle in
            guard let daemon = handle?.pointer else { return }
            dispatcher.finishAllStreams()
            // No new connections: the acceptor closes the listening socket. Without fast paths
            // libmicrohttpd keeps accepting until MHD_stop_daemon, which closes it: its
            // MHD_quiesce_daemon can abort the process on an epoll daemon with worker threads
            // (0.9.75; it races with the workers' own removal of the socket from their epoll
            // sets, and the loser panics: docs/ARCHITECTURE.md, "The fast paths").
            acceptor?.stop()
            for readLoop in readLoops { readLoop.stop() }  // answers the reads in hand, closes the rest
            waitForActiveRequests(upTo: configuration.shutdownGracePeriod)
            dispatcher.resumeAllForShutdown()
            // Let the worker threads send those 503s before the connections are closed.
            waitForActiveRequests(upTo: .milliseconds(500))
            MHD_stop_daemon(daemon)
            dispatcher.watchdog.stop()
            handle = nil
            Unmanaged.passUnretained(dispatcher).release()
            logger.deinitialize(count: 1)
            logger.deallocate()
        }
    }

    /// Connections whose reads the read loops answer, right now.
    var connectionsInReadLoops: Int { readLoops.connectionsHeld }

    /// Requests between their first byte of handling and their completion, right now.
    public var activeRequests: Int {
        dispatcher.activeRequests
    }

    deinit {
        stop()
    }

    /// Each connection is a file descriptor: raise the process's soft limit (often 1024) so
    /// that `connectionLimit` can be reached, as far as the hard limit allows.
    private static func raiseDescriptorLimit(
        toServe connections: Int, errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    ) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
        // Beyond connections: the listening socket, epolls, pipes, logs, and the body files
        // bodies may be kept in.
        let wanted = rlim_t(connections + 64 + PreparedResponse.bodyFileLimit)
        guard limit.rlim_cur < wanted else { return }
        limit.rlim_cur = min(wanted, limit.rlim_max)
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < wanted {
            errorLog?(
                .warning,
                "open-file limit is \(limit.rlim_cur) (hard limit); fewer than \(connections) connections can be served; "
                    + "raise it (ulimit -n, or the container's nofile limit)")
        }
    }

    private func waitForActiveRequests(upTo grace: Duration) {
        let step = Duration.milliseconds(10)
        var waited = Duration.zero
        while dispatcher.activeRequests > 0, waited < grace {
            var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
            nanosleep(&pause, nil)
            waited += step
        }
    }
}

// MARK: - libmicrohttpd callbacks
// Plain nonisolated functions, not closures from a MainActor context (Swift 6 would assert the
// main actor when libmicrohttpd calls them on its own threads; docs/ARCHITECTURE.md). Their
// context is the Dispatcher, passed through `Unmanaged`.

private func dispatcher(_ context: UnsafeMutableRawPointer?) -> Dispatcher {
    Unmanaged<Dispatcher>.fromOpaque(context!).takeUnretainedValue()
}

/// `body` with the Dispatcher, without retaining it: the server holds it for as long as
/// libmicrohttpd runs, and a retain and release of the one object every worker shares would
/// bounce its cache line between the cores on every call.
private func withDispatcher<Result>(_ context: UnsafeMutableRawPointer?, _ body: (Dispatcher) -> Result) -> Result {
    Unmanaged<Dispatcher>.fromOpaque(context!)._withUnsafeGuaranteedRef(body)
}

private let handleAccess: MHD_AccessHandlerCallback = {
    context, connection, url, method, version, uploadData, uploadDataSize, slot in
    guard let connection, let url, let method, let uploadDataSize, let slot else { return .NO }
    let request = RequestSlot(pointer: slot)
    return withDispatcher(context) { dispatcher in
        CallbackScope.run {
            if case .new = request.state {
                return dispatcher.begin(connection, method: method, path: url, version: version, slot: request)
            }
            if uploadDataSize.pointee > 0, let uploadData {
                let count = uploadDataSize.pointee
                uploadDataSize.pointee = 0
                return dispatcher.receive(
                    uploadData, count: count, slot: request, on: connection, method: method, path: url)
            }
            return dispatcher.finish(connection, method: method, path: url, slot: request)
        }
    }
}

private let handleCompletion: MHD_RequestCompletedCallback = { context, connection, slot, _ in
    guard let slot else { return }
    withDispatcher(context) { $0.complete(RequestSlot(pointer: slot), on: connection) }
}

/// A connection opened or closed: its watchdog entry lives in libmicrohttpd's socket context.
private let handleConnectionNotice: MHD_NotifyConnectionCallback = { context, connection, socketContext, code in
    guard let connection, let socketContext else { return }
    let watchdog = dispatcher(context).watchdog
    if code == MHD_ConnectionNotificationCode.CONNECTION_NOTIFY_STARTED {
        let watch = watchdog.connectionOpened(descriptor: cmhd_connection_descriptor(connection))
        socketContext.pointee = Unmanaged.passRetained(watch).toOpaque()
    } else if let raw = socketContext.pointee {
        let watch = Unmanaged<ConnectionWatchdog.Watch>.fromOpaque(raw).takeRetainedValue()
        watchdog.connectionClosed(watch)
        socketContext.pointee = nil
    }
}

/// A request's target, as received, before libmicrohttpd splits off the query or decodes anything.
/// Its length, for `Dispatcher.begin` to find a NUL the client sent in it (libmicrohttpd hands the
/// target on as a C string, which ends at the first NUL), and whether its path holds a `%00` (which
/// libmicrohttpd decodes into one). And its query: copied for `Request`, then
/// cut to nothing in libmicrohttpd's buffer (a NUL after the `?`), so that libmicrohttpd parses no
/// parameter — it would stall on more than its memory pool holds (`QueryString`,
/// docs/ARCHITECTURE.md, "Query strings"). The target is in libmicrohttpd's read buffer, which is
/// writable; it found the `?` before calling and parses what follows it after.
/// Returns nil: the request's slot stays empty until the access handler's first call.
private let noteTarget:
    @convention(c) (UnsafeMutableRawPointer?, UnsafePointer<CChar>?, OpaquePointer?) ->
        UnsafeMutableRawPointer? = { _, target, connection in
            guard let target, let connection, let context = cmhd_connection_context(connection) else { return nil }
            let length = strlen(target)
            var query = QueryString(bytes: [])
            let mark = memchr(target, Int32(UInt8(ascii: "?")), length)
            let pathLength = mark.map { UnsafePointer($0.assumingMemoryBound(to: CChar.self)) - target } ?? length
            let encodedNUL = containsEncodedNUL(UnsafeRawBufferPointer(start: target, count: pathLength))
            if let mark {
                let start = mark.assumingMemoryBound(to: CChar.self) + 1
                let count = length - (UnsafePointer(start) - target)
                if count > 0 {
                    query = QueryString(bytes: Array(UnsafeRawBufferPointer(start: start, count: count)))
                    start.pointee = 0
                }
            }
            Unmanaged<ConnectionWatchdog.Watch>.fromOpaque(context)._withUnsafeGuaranteedRef { watch in
                watch.targetLength.store(length, ordering: .relaxed)
                watch.pathHasEncodedNUL.store(encodedNUL, ordering: .relaxed)
                watch.query.withLock { $0 = query }
            }
            return nil
        }

/// Whether `bytes` hold `%00` (glibc's `memmem` is not exported to Swift).
private func containsEncodedNUL(_ bytes: UnsafeRawBufferPointer) -> Bool {
    guard bytes.count >= 3 else { return false }
    for index in 0..<(bytes.count - 2)
    where bytes[index] == UInt8(ascii: "%") && bytes[index + 1] == UInt8(ascii: "0")
        && bytes[index + 2] == UInt8(ascii: "0")
    {
        return true
    }
    return false
}

private let forwardLibraryMessage: cmhd_log_sink = { context, message in
    guard let message else { return }
    var line = String(cString: message)
    while line.last?.isNewline == true { line.removeLast() }
    dispatcher(context).errorLog?(.notice, "libmicrohttpd: \(line)")
}
