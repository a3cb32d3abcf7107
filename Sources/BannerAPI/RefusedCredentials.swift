import Threading

/// How often refused credentials (a 401 or 403) are logged: each at info, so that guessing tokens
/// leaves a trace at the default level, but at most `limit` lines a `window`, so that a flood of
/// guesses cannot flood the log. The first line of a window after one that dropped lines says how
/// many were dropped (docs/OPERATIONS.md, "Refused credentials").
final class RefusedCredentials: Sendable {
    enum Verdict: Equatable {
        /// Log it, after saying that `droppedBefore` refusals of the window before were not.
        case log(droppedBefore: Int)
        case drop
    }

    let limit: Int
    let window: UInt64

    private struct Window {
        var start: UInt64
        var logged: Int
        var dropped: Int
    }
    private let current = Lock<Window?>(nil)

    init(limit: Int = 20, windowNanoseconds: UInt64 = 10_000_000_000) {
        self.limit = limit
        self.window = windowNanoseconds
    }

    /// Whether a refusal at `now` (monotonic nanoseconds) is logged.
    func admit(at now: UInt64) -> Verdict {
        current.withLock { current in
            guard let open = current, now - open.start < window else {
                let dropped = current?.dropped ?? 0
                current = Window(start: now, logged: 1, dropped: 0)
                return .log(droppedBefore: dropped)
            }
            guard open.logged < limit else {
                current?.dropped += 1
                return .drop
            }
            current?.logged += 1
            return .log(droppedBefore: 0)
        }
    }
}
