import CMicroHTTPD
import Threading

/// Connections suspended while deferred work (a handler's `.deferred` reply) runs, so that each
/// is resumed exactly once: by its work's answer, or by `resumeAll` when the server stops (a
/// suspended connection must never outlive the daemon; it notices neither timeouts nor a client
/// that left).
final class DeferredAnswers: Sendable {
    private let suspended = Lock(Suspended())

    private struct Suspended {
        var connections: [ObjectIdentifier: SuspendedConnection] = [:]
        var stopping = false
    }

    private struct SuspendedConnection: @unchecked Sendable {
        let exchange: Exchange
        /// Valid until resumed: a suspended connection is never closed by libmicrohttpd.
        let connection: OpaquePointer
    }

    /// Suspends `connection` (on its worker thread, inside the access handler, as libmicrohttpd
    /// requires) and runs `work` in a task that prefers `executor` (`Reply.deferred`); its answer
    /// is queued at the final call that follows the resume. False when the server is stopping:
    /// then nothing was suspended.
    func suspend(
        _ exchange: Exchange, on connection: OpaquePointer,
        until work: @escaping @Sendable () async -> PreparedResponse, runningOn executor: (any TaskExecutor)?
    ) -> Bool {
        let accepted = suspended.withLock { state in
            guard !state.stopping else { return false }
            exchange.awaitAnswer()
            CallbackScope.assertInside("MHD_suspend_connection")
            MHD_suspend_connection(connection)
            state.connections[ObjectIdentifier(exchange)] = SuspendedConnection(
                exchange: exchange, connection: connection)
            return true
        }
        guard accepted else { return false }
        Self.run(work, on: executor) { answer in self.resume(exchange, with: answer) }
        return true
    }

    /// Runs deferred work (`Reply.deferred`) in a task of its own that prefers `executor`, else
    /// `BlockingTaskExecutor.shared` — off the cooperative pool: it may block (a store write waiting
    /// for a lock) —, and hands its answer to `deliver`. Libmicrohttpd's connections and the read
    /// loops' both start their work here.
    static func run(
        _ work: @escaping @Sendable () async -> PreparedResponse, on executor: (any TaskExecutor)?,
        then deliver: @escaping @Sendable (PreparedResponse) -> Void
    ) {
        Task(executorPreference: executor ?? BlockingTaskExecutor.shared) { deliver(await work()) }
    }

    /// Hands the answer to the connection's thread; a no-op when `resumeAll` answered it already.
    private func resume(_ exchange: Exchange, with answer: PreparedResponse) {
        suspended.withLock { state in
            guard let entry = state.connections.removeValue(forKey: ObjectIdentifier(exchange)) else { return }
            exchange.deliver(answer)
            MHD_resume_connection(entry.connection)
        }
    }

    /// Refuses new deferred work and answers every suspended request with `answer`.
    func resumeAll(with answer: PreparedResponse) {
        suspended.withLock { state in
            state.stopping = true
            for entry in state.connections.values {
                entry.exchange.deliver(answer)
                MHD_resume_connection(entry.connection)
            }
            state.connections.removeAll()
        }
    }
}
