import Dispatch
import MicroHTTP
import Threading

/// The subscribers of one carousel's event stream (`GET …/banner/events`) and what they are sent:
/// on subscribing, the current state; then one event per change of the carousel. (Heartbeats
/// between events come from `Heartbeat`, for every stream at once.)
///
///     retry: 2000
///     event: state
///     id: 17
///     data: {"index":2,…,"version":17}
///
/// Each event is encoded once and shared by every subscriber's queue; while there is none, not at
/// all: the next subscriber builds the current one (docs/PERFORMANCE.md, carousels at scale).
final class EventHub: Sendable {
    /// How long a browser's EventSource waits before reconnecting.
    static let retryMilliseconds = 2000

    /// The group of the streams registry this hub's subscribers are kept in.
    let group: String
    /// The latest event and its version, nil when no subscriber needed it; the lock is held
    /// across every publish and subscribe, so that a new subscriber gets each change exactly once
    /// (in its first event or after it).
    private let latestEvent: Lock<(version: UInt64, event: [UInt8])?>
    private let streams: StreamRegistry
    /// The carousel's state now, as `version` and JSON (its prepared reads).
    private let current: @Sendable () -> (version: UInt64, json: [UInt8])

    init(group: String, streams: StreamRegistry, current: @escaping @Sendable () -> (version: UInt64, json: [UInt8])) {
        self.group = group
        latestEvent = Lock(nil)
        self.streams = streams
        self.current = current
    }

    var subscriberCount: Int { streams.count(in: group) }

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
            if latest == nil {
                let (version, json) = current()
                latest = (version, Self.event(version: version, stateJSON: json))
            }
            // False when the server is stopping: the stream is then ended, and its request answered 503.
            _ = streams.add(stream, to: group, first: Self.retryLine + latest!.event)
        }
        return stream
    }

    /// Sends the new state to every subscriber; encodes it only when there is one.
    func publish(version: UInt64, stateJSON: () -> [UInt8]) {
        latestEvent.withLock { latest in
            // A subscriber that came after the state was published has had this version first.
            if latest?.version == version { return }
            guard subscriberCount > 0 else {
                latest = nil
                return
            }
            let event = Self.event(version: version, stateJSON: stateJSON())
            latest = (version, event)
            streams.broadcast(event, to: group)
        }
    }

    /// Ends every subscriber's stream: the carousel is gone.
    func finishAll() {
        streams.finish(group: group)
    }

    private static let retryLine = Array("retry: \(retryMilliseconds)\n".utf8)

    /// `event: state`, `id: <version>`, `data: <the state, one line of JSON>`.
    static func event(version: UInt64, stateJSON: [UInt8]) -> [UInt8] {
        var json = stateJSON[...]
        while json.last == UInt8(ascii: "\n") { json = json.dropLast() }
        return Array("event: state\nid: \(version)\ndata: ".utf8) + json + Array("\n\n".utf8)
    }
}

/// A comment line on every open stream every `interval`: proxies keep idle streams open, and a
/// send finds subscribers that hung up (their write fails and the stream closes).
final class Heartbeat: Sendable {
    /// A repeating Dispatch timer; thread-safe, but its protocol is not marked Sendable.
    nonisolated(unsafe) private let timer: DispatchSourceTimer

    init(every interval: Duration, streams: StreamRegistry) {
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "carousel.heartbeat"))
        let period = DispatchTimeInterval.nanoseconds(Int(interval.nanoseconds))
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { [streams] in streams.broadcastToAll(Self.comment) }
        timer.resume()
    }

    func stop() {
        timer.cancel()
    }

    private static let comment = Array(": heartbeat\n\n".utf8)
}

/// `GET /screens/events` (docs/SCREENS.md): each screen that appears or changes state, as
/// `event: screen` with the entry `GET /screens` lists, to every subscriber. Nothing is sent on
/// subscribing: a page reads `GET /screens` once its stream is open.
final class ScreenEvents: Sendable {
    private static let group = "screens"
    private let streams: StreamRegistry

    init(streams: StreamRegistry) {
        self.streams = streams
    }

    func subscribe() -> ResponseStream {
        let stream = ResponseStream(
            headers: [
                HTTPHeader("Content-Type", "text/event-stream; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-cache"),
                HTTPHeader("X-Accel-Buffering", "no"),
            ])
        _ = streams.add(stream, to: Self.group, first: Array("retry: \(EventHub.retryMilliseconds)\n\n".utf8))
        return stream
    }

    /// Sends `event`, made only when someone follows: a fleet whose screens change state often
    /// (late receipts flipping in and out of step) must not encode each change for nobody. One who
    /// subscribes meanwhile reads `GET /screens` next, which has the change already.
    func publish(_ event: @autoclosure () -> [UInt8]) {
        guard streams.count(in: Self.group) > 0 else { return }
        streams.broadcast(event(), to: Self.group)
    }
}
