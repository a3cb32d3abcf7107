import Glibc
import Synchronization
import Threading

/// The clock a server's timeouts run on (docs/ARCHITECTURE.md, "Connections"): the watchdog's
/// deadlines, the acceptor's for a first request, the read loops' for an idle connection. The
/// system's monotonic clock; or, in tests, one that stands still until the test moves it
/// (`advance(by:)`), which has the server look at its deadlines again at once, as swift-nio's
/// embedded event loop advances time: no test waits for a real timeout.
public final class ServerClock: Sendable {
    /// CLOCK_MONOTONIC_COARSE: a few milliseconds' resolution, against timeouts of seconds, for a
    /// fraction of the precise clock's cost (it is read on every read loop's wake-up).
    public static let system = ServerClock(isManual: false)

    /// A clock that moves only by `advance(by:)`, from the system clock's now.
    public static func manual() -> ServerClock { ServerClock(isManual: true) }

    let isManual: Bool
    private let manualNow: Atomic<Int64>
    /// What to do when a manual clock moves: sweep, or wake a loop that will.
    private let observers = Lock<[Int: @Sendable () -> Void]>([:])
    private let lastObserver = Atomic<Int>(0)

    private init(isManual: Bool) {
        self.isManual = isManual
        manualNow = Atomic(Self.monotonic())
    }

    /// Nanoseconds, monotonic.
    func now() -> Int64 {
        isManual ? manualNow.load(ordering: .acquiring) : Self.monotonic()
    }

    /// Moves a manual clock on by `duration`, then has every server on it look at its deadlines
    /// (the watchdog sweeps on this thread; the acceptor and the read loops are woken to).
    public func advance(by duration: Duration) {
        precondition(isManual, "only a manual clock is moved by hand")
        let (seconds, attoseconds) = duration.components
        manualNow.add(seconds * 1_000_000_000 + attoseconds / 1_000_000_000, ordering: .releasing)
        for observer in observers.withLock({ Array($0.values) }) { observer() }
    }

    /// Calls `observer` after every `advance` of a manual clock (never for the system's), until
    /// `stopObserving` with the token returned.
    func observe(_ observer: @escaping @Sendable () -> Void) -> Int {
        let token = lastObserver.add(1, ordering: .relaxed).newValue
        if isManual { observers.withLock { $0[token] = observer } }
        return token
    }

    func stopObserving(_ token: Int) {
        if isManual { observers.withLock { _ = $0.removeValue(forKey: token) } }
    }

    private static func monotonic() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
