import Glibc
import Platform
import Threading

/// The replica's ear on the database: a connection of its own that `LISTEN`s on the changes'
/// channel, on a thread of its own, waiting on its socket. When the connection breaks (the
/// server stopped, the network cut) it reconnects with backoff, `LISTEN`s again and reports
/// `.reachable`, after which everything must be reloaded: notifications sent meanwhile are lost.
final class ChangeListener: Sendable {
    enum Event: Sendable {
        /// Connected and listening (first time, or again): reload everything.
        case reachable
        /// The connection failed or broke; the reason, for an operator.
        case unreachable(String)
        /// A carousel of this name changed.
        case changed(String)
    }

    /// Backoff between connection attempts: doubles from `firstPause` up to `longestPause`.
    static let firstPause: Duration = .milliseconds(100)
    static let longestPause: Duration = .seconds(2)

    private let parameters: [(keyword: String, value: String)]
    private let channel: String
    private let describe: String
    /// Written to wake the loop to stop; both ends closed with the listener.
    private let wake: Pipe
    private let running = Lock<State>(.idle)
    /// The listener's thread of its own: it blocks in `poll` for the store's life.
    private let thread = Lock<LoopThread?>(nil)

    private enum State { case idle, running, stopped }

    init(parameters: [(keyword: String, value: String)], channel: String, describe: String) {
        self.parameters = parameters
        self.channel = channel
        self.describe = describe
        do throws(Errno) {
            wake = try Pipe()
        } catch {
            preconditionFailure("pipe failed: \(error)")  // only at the descriptor limit, at start
        }
    }

    /// Starts listening; `report` is called on the listener's thread, in order. Once only.
    func start(_ report: @escaping @Sendable (Event) -> Void) {
        let start = running.withLock { state in
            guard case .idle = state else { return false }
            state = .running
            return true
        }
        guard start else { return }
        let started = LoopThread(name: "store-listener") { [self] in listen(report) }
        thread.withLock { $0 = started }
    }

    /// Stops listening and waits until the thread is done (no report after it returns).
    func stop() {
        let wasRunning = running.withLock { state in
            defer { state = .stopped }
            if case .running = state { return true }
            return false
        }
        guard wasRunning else { return }
        var byte: UInt8 = 1
        _ = write(wake.write.rawValue, &byte, 1)
        thread.withLock { $0 }?.join()
    }

    private func listen(_ report: (Event) -> Void) {
        var pause = Self.firstPause
        while true {
            let connection: PostgresConnection
            do {
                connection = try PostgresConnection(parameters)
                try connection.run("LISTEN \(channel)")
            } catch {
                report(.unreachable("\(describe) cannot be reached (\(error.message)); retrying in \(pause)"))
                if waitForWake(timeout: pause) { return }
                pause = min(pause * 2, Self.longestPause)
                continue
            }
            pause = Self.firstPause
            report(.reachable)
            while true {
                // The socket wakes us for notifications and for the server going away; a silent
                // network cut is found by the TCP keepalives asked for in the parameters.
                var descriptors = [
                    pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0),
                    pollfd(fd: wake.read.rawValue, events: Int16(POLLIN), revents: 0),
                ]
                _ = systemCall { poll(&descriptors, 2, -1) }
                if descriptors[1].revents != 0 { return }
                do {
                    try connection.consumeInput()
                } catch {
                    report(.unreachable("\(describe) went away (\(error.message)); reconnecting"))
                    break
                }
                var names: [String] = []
                while let name = connection.nextNotification() {
                    if !names.contains(name) { names.append(name) }
                }
                for name in names { report(.changed(name)) }
                if !connection.isOpen {
                    report(.unreachable("\(describe) closed the connection; reconnecting"))
                    break
                }
            }
        }
    }

    /// Waits `timeout` or until woken to stop; true when woken.
    private func waitForWake(timeout: Duration) -> Bool {
        var descriptor = pollfd(fd: wake.read.rawValue, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(
            timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard case .success(let ready) = systemCall({ poll(&descriptor, 1, milliseconds) }) else { return false }
        return ready > 0
    }
}
