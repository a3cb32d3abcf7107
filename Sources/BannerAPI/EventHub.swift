import Dispatch
import Locking
import MicroHTTP

/// The subscribers of `GET /banner/events` and what they are sent: on subscribing, the current
/// state; then one event per change of the carousel; between events, a heartbeat comment.
///
///     retry: 2000
///     event: state
///     id: 17
///     data: {"index":2,…,"version":17}
///
/// Each event is encoded once and shared by every subscriber's queue.
final class EventHub: Sendable {
    /// How long a browser's EventSource waits before reconnecting.
    static let retryMilliseconds = 2000

    private let state: Lock<HubState>
    /// A repeating Dispatch timer; thread-safe, but its protocol is not marked Sendable.
    nonisolated(unsafe) private let heartbeatTimer: DispatchSourceTimer

    private struct HubState {
        var latestEvent: [UInt8]
        var subscribers: [ObjectIdentifier: ResponseStream] = [:]
        var isStopped = false
    }

    init(version: UInt64, stateJSON: [UInt8], heartbeat: Duration) {
        state = Lock(HubState(latestEvent: Self.event(version: version, stateJSON: stateJSON)))
        heartbeatTimer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "carousel.heartbeat"))
        let interval = DispatchTimeInterval.nanoseconds(Int(heartbeat.nanoseconds))
        heartbeatTimer.schedule(deadline: .now() + interval, repeating: interval)
        heartbeatTimer.setEventHandler { [weak self] in self?.broadcast(Self.heartbeatComment) }
        heartbeatTimer.resume()
    }

    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// A new stream that starts with the current state and follows every change.
    func subscribe(headers: [HTTPHeader]) -> ResponseStream {
        let stream = ResponseStream(
            headers: [
                HTTPHeader("Content-Type", "text/event-stream; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-cache"),
                // nginx and similar proxies would otherwise buffer the stream.
                HTTPHeader("X-Accel-Buffering", "no"),
            ] + headers)
        let key = ObjectIdentifier(stream)
        stream.onClose { [weak self] in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: key) }
        }
        state.withLock { hub in
            guard !hub.isStopped else {
                stream.finish()
                return
            }
            hub.subscribers[key] = stream
            // Under the lock, so that no change published meanwhile is missed or sent first.
            stream.send(Self.retryLine + hub.latestEvent)
        }
        return stream
    }

    /// Sends the new state to every subscriber.
    func publish(version: UInt64, stateJSON: [UInt8]) {
        let event = Self.event(version: version, stateJSON: stateJSON)
        state.withLock { hub in
            hub.latestEvent = event
            for subscriber in hub.subscribers.values { subscriber.send(event) }
        }
    }

    /// Ends every stream and the heartbeat; later subscribers get an ended stream.
    func stop() {
        heartbeatTimer.cancel()
        let subscribers = state.withLock { hub in
            hub.isStopped = true
            return Array(hub.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }

    /// A send also finds subscribers that hung up: their write fails and the stream closes.
    private func broadcast(_ bytes: [UInt8]) {
        state.withLock { hub in
            for subscriber in hub.subscribers.values { subscriber.send(bytes) }
        }
    }

    private static let retryLine = Array("retry: \(retryMilliseconds)\n".utf8)
    private static let heartbeatComment = Array(": heartbeat\n\n".utf8)

    /// `event: state`, `id: <version>`, `data: <the state, one line of JSON>`.
    static func event(version: UInt64, stateJSON: [UInt8]) -> [UInt8] {
        var json = stateJSON[...]
        while json.last == UInt8(ascii: "\n") { json = json.dropLast() }
        return Array("event: state\nid: \(version)\ndata: ".utf8) + json + Array("\n\n".utf8)
    }
}
