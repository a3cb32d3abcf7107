import CMicroHTTPD
import Glibc
import Platform
import Threading

/// A thread of its own that waits in an epoll set for the life of a server and is woken from
/// other threads (`WakeableEpoll`): the acceptor's and each read loop's. It owns the set (closed
/// when the loop goes) and the thread; its owner says what to make of each batch of events, on
/// that thread, with state only that thread touches.
///
/// Why a thread and not a Dispatch worker: it blocks in `epoll_wait` for good, which would hold
/// one of Dispatch's threads forever (docs/ARCHITECTURE.md, "Locks and threads").
final class EventLoop: @unchecked Sendable {
    let epoll: WakeableEpoll
    /// The token of the wake-up's events, which the loop takes itself: owners use the others.
    static let wakeUpToken = UInt64.max
    private let name: String
    private let errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    private let shared = Lock(Shared())

    private struct Shared {
        var stopping = false
        var thread: LoopThread?
    }

    /// - Parameter name: the thread's (`http-acceptor`), at most 15 bytes.
    init(name: String, errorLog: (@Sendable (ServerLogLevel, String) -> Void)?) throws(WakeableEpoll.Failure) {
        self.name = name
        self.errorLog = errorLog
        epoll = try WakeableEpoll(wakeUpToken: Self.wakeUpToken)
    }

    var isStopping: Bool { shared.withLock { $0.stopping } }

    /// Starts the thread. It makes its state (`makeState`), then, until `stop`, waits for events —
    /// at most `timeout(state)` milliseconds, -1 for no limit — and gives each batch, the
    /// wake-up's left out, to `turn`; then it calls `finish`.
    func start<State>(
        makeState: @escaping @Sendable () -> State,
        timeout: @escaping @Sendable (State) -> Int32,
        turn: @escaping @Sendable (inout State, ArraySlice<epoll_event>) -> Void,
        finish: @escaping @Sendable (inout State) -> Void
    ) {
        let thread = LoopThread(name: name) { [self] in
            Self.blockBrokenPipeSignal()
            var state = makeState()
            var events = [epoll_event](repeating: epoll_event(), count: 256)
            while !isStopping {
                let waited = systemCall { epoll_wait(epoll.descriptor, &events, Int32(events.count), timeout(state)) }
                guard case .success(let count) = waited else {
                    if case .failure(let error) = waited {
                        errorLog?(.warning, "\(name) stopped: epoll_wait failed: \(error)")
                    }
                    break
                }
                var batch = events[..<Int(count)]
                if batch.contains(where: { $0.data.u64 == Self.wakeUpToken }) {
                    epoll.drain()
                    batch = ArraySlice(batch.filter { $0.data.u64 != Self.wakeUpToken })
                }
                turn(&state, batch)
            }
            finish(&state)
        }
        shared.withLock { $0.thread = thread }
    }

    /// A write to a connection the peer has reset raises SIGPIPE, whose default ends the
    /// process; `sendfile` has no `MSG_NOSIGNAL` to refuse it, as `send` does. Blocked on this
    /// thread (as libmicrohttpd does on its own), the signal stays pending here, never
    /// delivered, and the call fails with EPIPE: the connection ends, not the server.
    private static func blockBrokenPipeSignal() {
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGPIPE)
        let blocked = pthread_sigmask(SIG_BLOCK, &signals, nil)
        precondition(blocked == 0, "pthread_sigmask: \(Errno(blocked))")
    }

    /// Ends the loop (its `finish` runs) and returns when the thread has. False
    /// when the loop was stopped before. Also for a loop never started.
    @discardableResult
    func stop() -> Bool {
        let (first, thread) = shared.withLock { shared in
            defer { shared.stopping = true }
            return (!shared.stopping, shared.thread)
        }
        guard first else { return false }
        if let thread {
            epoll.signal()
            thread.join()
        }
        return true
    }
}
