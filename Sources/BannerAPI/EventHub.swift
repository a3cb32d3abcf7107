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

    /// The group of the streams registry this hub's subscribers are kept in.
    static let group = "events"

    /// The latest event; its lock is held across every publish and subscribe, so that a new
    /// subscriber gets each change exactly once (in its first event or after it).
    private let latestEvent: Lock<[UInt8]>
    private let streams: StreamRegistry
    /// A repeating Dispatch timer; thread-safe, but its protocol is not marked Sendable.
    nonisolated(unsafe) private let heartbeatTimer: DispatchSourceTimer

    init(version: UInt64, stateJSON: [UInt8], heartbeat: Duration, streams: StreamRegistry) {
        latestEvent = Lock(Self.event(version: version, stateJSON: stateJSON))
        self.streams = streams
        heartbeatTimer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "carousel.heartbeat"))
        let interval = DispatchTimeInterval.nanoseconds(Int(heartbeat.nanoseconds))
        heartbeatTimer.schedule(deadline: .now() + interval, repeating: interval)
        // A send also finds subscribers that hung up: their write fails and the stream closes.
        heartbeatTimer.setEventHandler { [streams] in streams.broadcast(Self.heartbeatComment, to: Self.group) }
        heartbeatTimer.resume()
    }

    var subscriberCount: Int { streams.count(in: Self.group) }

    /// A new stream that starts with the current state and follows every change (an ended one
    /// when the server is stopping).
    func subscribe(headers: [HTTPHeader]) -> ResponseStream {
        let stream = ResponseStream(
            headers: [
                HTTPHeader("Content-Type", "text/event-stream; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-cache"),
                // nginx and similar proxies would otherwise buffer the stream.
                HTTPHeader("X-Accel-Buffering", "no"),
            ] + headers)
        latestEvent.withLock { latest in
            streams.add(stream, to: Self.group, first: Self.retryLine + latest)
        }
        return stream
    }

    /// Sends the new state to every subscriber.
    func publish(version: UInt64, stateJSON: [UInt8]) {
        let event = Self.event(version: version, stateJSON: stateJSON)
        latestEvent.withLock { latest in
            latest = event
            streams.broadcast(event, to: Self.group)
        }
    }

    /// Stops the heartbeat. The streams themselves are ended by the server when it stops.
    func stop() {
        heartbeatTimer.cancel()
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
