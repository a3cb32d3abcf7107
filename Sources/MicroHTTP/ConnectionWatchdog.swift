import Dispatch
import Glibc
import Synchronization
import Threading

/// Cuts connections that are too slow to deliver a request — slowloris clients that trickle
/// headers or a body a byte at a time, which libmicrohttpd's idle timeout never catches because
/// every byte counts as activity.
///
/// A connection has `timeout` to send its request headers once it is ready for a request
/// (accepted, or done with the previous one), and `timeout` again for the body. While a request
/// is being answered — deferred work and event streams included — its clock stops. A connection
/// past its deadline is shut down; libmicrohttpd then sees the end of the stream and closes it.
/// Its time is the server's clock (`ServerClock`): on a test's manual clock it sweeps when the
/// test moves the clock, not on a timer.
final class ConnectionWatchdog: Sendable {
    /// One connection's deadline, kept in libmicrohttpd's per-connection socket context.
    final class Watch: Sendable {
        let descriptor: Int32
        /// The clock's nanoseconds by which the awaited part must be in; 0 while answering.
        let deadline = Atomic<Int64>(0)
        /// Between a request's first handler call and its completion (`Dispatcher.activeRequests`).
        let inRequest = Atomic<Bool>(false)
        /// The current request's target as libmicrohttpd read it, before it split off the query
        /// or decoded anything: the length of its C string, for `Dispatcher` to tell whether the
        /// client sent a NUL in it. -1 before the first request. Written and read on the
        /// connection's worker thread only.
        let targetLength = Atomic<Int>(-1)
        /// Whether the current request's path (before any `?`) holds `%00`, which libmicrohttpd
        /// decodes into a NUL that ends the path it hands on. Worker thread only, as above.
        let pathHasEncodedNUL = Atomic<Bool>(false)
        /// The current request's query string, taken off its target before libmicrohttpd could
        /// parse it (`QueryString`). Written and read on the connection's worker thread only.
        let query = Mutex<QueryString>(QueryString(bytes: []))

        init(descriptor: Int32) {
            self.descriptor = descriptor
        }
    }

    /// How long each awaited part of a request may take, in nanoseconds.
    let timeout: Int64
    private let clock: ServerClock
    private let watches = Lock<[ObjectIdentifier: Watch]>([:])
    /// Dispatch sources are thread-safe; the `DispatchSourceTimer` protocol just is not Sendable.
    /// Nil on a manual clock, whose moves sweep (a source never resumed must never be released).
    nonisolated(unsafe) private let sweeper: DispatchSourceTimer?
    /// The manual clock's hold on the sweep.
    private let observer: Int

    init(timeoutSeconds: Int, clock: ServerClock = .system) {
        timeout = Int64(timeoutSeconds) * 1_000_000_000
        self.clock = clock
        // The handlers hold the table and the clock, not the watchdog: a weak reference to the
        // watchdog would give it a side table, and every retain of it on the request path would
        // take the slow way.
        observer = clock.observe { [watches] in Self.sweep(watches, now: clock.now()) }
        if clock.isManual {
            sweeper = nil
        } else {
            let sweeper = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "microhttp.watchdog"))
            // Sweeping four times per timeout keeps the overshoot to a quarter of it.
            let interval = DispatchTimeInterval.nanoseconds(Int(max(timeout / 4, 10_000_000)))
            sweeper.schedule(deadline: .now() + interval, repeating: interval)
            sweeper.setEventHandler { [watches] in Self.sweep(watches, now: clock.now()) }
            sweeper.resume()
            self.sweeper = sweeper
        }
    }

    func connectionOpened(descriptor: Int32) -> Watch {
        let watch = Watch(descriptor: descriptor)
        waitForRequest(watch)
        watches.withLock { $0[ObjectIdentifier(watch)] = watch }
        return watch
    }

    /// Called before libmicrohttpd closes the descriptor, so a sweep never touches a reused one.
    func connectionClosed(_ watch: Watch) {
        watches.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(watch)) }
    }

    /// Ready for a request (or its headers are in and the body is awaited): start the clock.
    func waitForRequest(_ watch: Watch) {
        watch.deadline.store(clock.now() + timeout, ordering: .relaxed)
    }

    /// The request is in: stop the clock while it is answered.
    func answering(_ watch: Watch) {
        watch.deadline.store(0, ordering: .relaxed)
    }

    /// Connections with a request between its first handler call and its completion.
    var connectionsInRequest: Int {
        watches.withLock { watches in watches.values.count { $0.inRequest.load(ordering: .relaxed) } }
    }

    func stop() {
        sweeper?.cancel()
        clock.stopObserving(observer)
    }

    deinit {
        stop()
    }

    private static func sweep(_ watches: Lock<[ObjectIdentifier: Watch]>, now: Int64) {
        watches.withLock { watches in
            for watch in watches.values {
                let deadline = watch.deadline.load(ordering: .relaxed)
                guard deadline != 0, deadline < now else { continue }
                watch.deadline.store(0, ordering: .relaxed)
                shutdown(watch.descriptor, Int32(SHUT_RDWR))
            }
        }
    }
}
