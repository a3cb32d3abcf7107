import Foundation

/// One Server-Sent Event, as a browser's EventSource would parse it.
public struct ServerSentEvent: Sendable, Equatable {
    public var event: String?
    public var id: String?
    public var data: String?
    public var retry: Int?
    /// Comment lines (`: heartbeat`), which EventSource ignores; tests look at them.
    public var comments: [String] = []
}

/// Reads the events of a `text/event-stream` response from a connection's chunked body.
public final class EventStreamReader: @unchecked Sendable {
    public let connection: HTTPConnection
    private var pending = ""

    public init(_ connection: HTTPConnection) {
        self.connection = connection
    }

    /// The next event (blank-line terminated block); nil when the stream ends.
    public func next() async throws -> ServerSentEvent? {
        while true {
            if let end = pending.range(of: "\n\n") {
                let block = String(pending[..<end.lowerBound])
                pending.removeSubrange(..<end.upperBound)
                return Self.parse(block)
            }
            guard let chunk = try await connection.readChunk() else { return nil }
            pending += String(decoding: chunk, as: UTF8.self)
        }
    }

    /// The next event that is not only comments.
    public func nextEvent() async throws -> ServerSentEvent? {
        while let event = try await next() {
            if event.event != nil || event.data != nil || event.id != nil || event.retry != nil { return event }
        }
        return nil
    }

    private static func parse(_ block: String) -> ServerSentEvent {
        var event = ServerSentEvent()
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                event.comments.append(String(line.dropFirst()).trimmingCharacters(in: .whitespaces))
                continue
            }
            let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let field = String(parts[0])
            var value = parts.count > 1 ? String(parts[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch field {
            case "event": event.event = value
            case "id": event.id = value
            case "data": event.data = event.data.map { $0 + "\n" + value } ?? value
            case "retry": event.retry = Int(value)
            default: break
            }
        }
        return event
    }
}
