import Glibc
import Threading

/// The life of one request, held in libmicrohttpd's per-request slot (`*req_cls`) from the first
/// access-handler call to the completion notification (docs/ARCHITECTURE.md explains the calls):
///
///     new ──first call──▶ headersReceived ──upload call──▶ exchange(.receivingBody)
///      │                        │                                  │
///      │                        └──────────── final call ──────────┴──▶ answered at once
///      │                                                           └──▶ exchange(.awaitingAnswer), suspended
///      │                                                                  │ deferred work done: resume
///      │                                                                  ▼
///      │                                                     exchange(.answerReady) ──final call──▶ answered
///      └──first call, refused (framing, declared size)──▶ exchange(.refused)
///     completion: any state ──▶ new, releasing the exchange
///
/// Most requests (reads without a body) never get past `headersReceived`, which the slot records
/// with a marker instead of an object: nothing is allocated for them.
struct RequestSlot {
    let pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>

    enum State {
        /// The first access-handler call of a request: nothing recorded yet.
        case new
        /// The headers are in; no body byte, no deferred work.
        case headersReceived
        case exchange(Exchange)
    }

    /// Not a real pointer: an address no allocation can have (objects are 16-byte aligned).
    private static var headersReceivedMarker: UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: 1)! }

    var state: State {
        guard let raw = pointer.pointee else { return .new }
        if raw == Self.headersReceivedMarker { return .headersReceived }
        return .exchange(Unmanaged<Exchange>.fromOpaque(raw).takeUnretainedValue())
    }

    /// new → headersReceived.
    func headersArrived() {
        assert(pointer.pointee == nil, "a request's first call happens once")
        pointer.pointee = Self.headersReceivedMarker
    }

    /// The request's exchange, made on first need (a body, a refusal, deferred work) and kept in
    /// the slot, retained, until `complete()`. `bodyLimit` is the largest body it keeps, when it
    /// is made here.
    func exchange(bodyLimit: Int) -> Exchange {
        if case .exchange(let existing) = state { return existing }
        let exchange = Exchange(bodyLimit: bodyLimit)
        pointer.pointee = Unmanaged.passRetained(exchange).toOpaque()
        return exchange
    }

    /// Any state → new; releases the exchange.
    func complete() {
        if case .exchange = state { Unmanaged<Exchange>.fromOpaque(pointer.pointee!).release() }
        pointer.pointee = nil
    }
}

/// A request that needed more than its headers: its body, a refusal, or deferred work.
///
/// The body is touched only by the connection's worker thread (libmicrohttpd never moves a
/// connection between threads; debug builds check it). The phase crosses threads: deferred work
/// delivers the answer from another one, so it is behind a lock (one writer then one reader:
/// never contended).
final class Exchange: @unchecked Sendable {
    enum Phase {
        /// Upload calls append to `body`.
        case receivingBody
        /// A response was queued before the body arrived (ambiguous framing, a declared oversize
        /// body); the rest of the request is ignored.
        case refused
        /// A body without a declared length outgrew the cap: its 413 was written on the socket
        /// itself, libmicrohttpd taking no response mid-body; the rest is read and dropped, and
        /// the connection closed at its end.
        case answeredOnTheSocket
        /// The connection is suspended while deferred work runs.
        case awaitingAnswer
        /// The deferred work's answer, queued at the final call that follows the resume.
        case answerReady(PreparedResponse)
    }

    private(set) var body: [UInt8] = []
    /// Body bytes received, including those dropped once the body exceeded the cap.
    private(set) var receivedBytes = 0
    /// The largest body kept (`ServerConfiguration.maxBodySize`, or the handler's `bodyLimit`).
    let bodyLimit: Int
    private let currentPhase = Lock(Phase.receivingBody)
    #if DEBUG
        private let worker = pthread_self()
    #endif

    init(bodyLimit: Int) { self.bodyLimit = bodyLimit }

    var phase: Phase { currentPhase.withLock { $0 } }

    /// Room for a body of `count` bytes (its declared length), so that appending copies it once.
    func reserveBody(_ count: Int) {
        assertOnWorkerThread()
        body.reserveCapacity(min(count, bodyLimit))
    }

    /// Keeps `bytes` while the body stays within `bodyLimit`; past it the body is dropped, and
    /// only counted. False once the body is over the limit.
    func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        assertOnWorkerThread()
        receivedBytes += bytes.count
        guard receivedBytes <= bodyLimit else {
            body = []
            return false
        }
        body.append(contentsOf: bytes)
        return true
    }

    /// receivingBody → refused.
    func refuse() {
        assertOnWorkerThread()
        currentPhase.withLock { $0 = .refused }
    }

    /// receivingBody → answeredOnTheSocket.
    func answeredOnTheSocket() {
        assertOnWorkerThread()
        currentPhase.withLock { $0 = .answeredOnTheSocket }
    }

    /// receivingBody → awaitingAnswer, just before the connection is suspended.
    func awaitAnswer() {
        assertOnWorkerThread()
        currentPhase.withLock { $0 = .awaitingAnswer }
    }

    /// awaitingAnswer → answerReady, from any thread, just before the connection is resumed.
    func deliver(_ answer: PreparedResponse) {
        currentPhase.withLock { $0 = .answerReady(answer) }
    }

    private func assertOnWorkerThread() {
        #if DEBUG
            precondition(pthread_equal(worker, pthread_self()) != 0, "an exchange is its connection's thread's alone")
        #endif
    }
}
