import Foundation

/// A response as read off the wire.
public struct HTTPResponse: Sendable {
    public let status: Int
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body parsed with Foundation's JSONSerialization: an independent parser, so tests do
    /// not trust the service's own JSON code to check the service's JSON.
    public var json: [String: Any] {
        get throws {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw HTTPClientError.protocolViolation("body is not a JSON object: \(text)")
            }
            return object
        }
    }
}

public enum HTTPClientError: Error, CustomStringConvertible {
    case connectFailed(Int32)
    case closedByPeer
    case timedOut
    case protocolViolation(String)

    public var description: String {
        switch self {
        case .connectFailed(let code): "connect failed, errno \(code)"
        case .closedByPeer: "connection closed by the server"
        case .timedOut: "no answer within the socket timeout"
        case .protocolViolation(let message): "bad HTTP: \(message)"
        }
    }
}

/// One HTTP/1.1 connection over a plain blocking socket, kept open between requests, so tests
/// control exactly what is sent (keep-alive, partial bodies, wrong headers) and see every byte.
///
/// The socket calls block, so they run on the connection's own Dispatch queue, never on the
/// Swift concurrency pool: the server under test needs that pool (two threads on two cores) to
/// run its deferred work, and tests blocking it would starve the server.
public final class HTTPConnection: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private let queue = DispatchQueue(label: "HTTPConnection")

    /// Connects at once: a loopback connect does not wait on the server's threads.
    /// `timeoutSeconds` is stretched by `sanitizerAllowance`: under a sanitizer everything is
    /// several times slower, and a test blocking the cooperative pool for seconds (a store's busy
    /// timeout) delays every other test's answers by as much. 60 s by default: with every test
    /// running at once on two cores, a test's task may wait more than 10 s for a thread before
    /// it lets the server answer (seen here: a deferred answer released after the client gave up).
    /// `receiveBuffer` shrinks the socket's receive buffer (before connecting, so the window the
    /// server sees is small too): an answer larger than it reaches the server's socket in pieces.
    public init(port: Int, host: String = "127.0.0.1", timeoutSeconds: Int = 60, receiveBuffer: Int? = nil) throws {
        try TestTier.needs("a socket")
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var bytes = receiveBuffer.map(Int32.init) {
            setsockopt(descriptor, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        var timeout = timeval(tv_sec: Int(Double(timeoutSeconds) * sanitizerAllowance), tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        // Each write goes out as written (a request in pieces stays in pieces), not held back by
        // Nagle's algorithm until the server acknowledges the one before.
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        inet_pton(AF_INET, host, &address.sin_addr)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // Not closed here: every stored property is set, so `deinit` runs for a throwing init too,
        // and a second close could hit a descriptor number another thread reused meanwhile (a
        // server's listening socket, under parallel tests).
        guard result == 0 else { throw HTTPClientError.connectFailed(errno) }
    }

    deinit {
        Glibc.close(descriptor)
    }

    /// Makes the close (with the connection object) send a reset rather than an end (`SO_LINGER`
    /// 0), as a client that crashed or a proxy that gave up: the server sees an error.
    public func resetOnClose() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    }

    /// Hangs up as a client leaving does (both directions shut); the descriptor is closed with
    /// the connection object.
    public func hangUp() {
        shutdown(descriptor, Int32(SHUT_RDWR))
    }

    /// Sends a request and reads its response.
    public func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
    ) async throws -> HTTPResponse {
        try await onQueue { try self.sendNow(method, path, headers: headers, body: body) }
    }

    public func send(
        _ method: String, _ path: String, json: String, headers: [(String, String)] = []
    ) async throws -> HTTPResponse {
        try await send(method, path, headers: [("Content-Type", "application/json")] + headers, body: Array(json.utf8))
    }

    /// Sends raw bytes (a request written by hand).
    public func write(_ bytes: [UInt8]) async throws {
        try await onQueue { try self.writeNow(bytes) }
    }

    public func readResponse(toHead: Bool = false) async throws -> HTTPResponse {
        try await onQueue { try self.readResponseNow(toHead: toHead) }
    }

    /// Sends a GET and reads only the head of the response, for a body that streams (chunked).
    public func openStream(_ path: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
        try await onQueue {
            let head = Self.head("GET", path, headers)
            try self.writeNow(Array((head + "\r\n").utf8))
            return try self.readResponseNow(toHead: true)
        }
    }

    /// The next chunk of a chunked body; nil after the last (zero-length) chunk.
    public func readChunk() async throws -> [UInt8]? {
        try await onQueue {
            let lineEnd = try self.readUntil(Array("\r\n".utf8))
            let sizeText = String(decoding: self.buffer[..<lineEnd], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";")[0], radix: 16) else {
                throw HTTPClientError.protocolViolation("chunk size '\(sizeText)'")
            }
            self.buffer.removeFirst(lineEnd + 2)
            try self.fill(atLeast: size + 2)
            let chunk = Array(self.buffer[..<size])
            self.buffer.removeFirst(size + 2)
            return size == 0 ? nil : chunk
        }
    }

    /// Waits until the server closes the connection; false if it is still open after the timeout.
    public func waitForClose() async -> Bool {
        (try? await onQueue { self.waitForCloseNow() }) ?? false
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }

    private func sendNow(
        _ method: String, _ path: String, headers: [(String, String)], body: [UInt8]?
    ) throws -> HTTPResponse {
        var head = Self.head(method, path, headers)
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        try writeNow(Array(head.utf8) + (body ?? []))
        return try readResponseNow(toHead: method == "HEAD")
    }

    /// The request line and headers, with `Host: 127.0.0.1` unless `headers` name a Host.
    private static func head(_ method: String, _ path: String, _ headers: [(String, String)]) -> String {
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        return head
    }

    private func writeNow(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw HTTPClientError.closedByPeer }
            offset += sent
        }
    }

    private func readResponseNow(toHead: Bool) throws -> HTTPResponse {
        let headEnd = try readUntil(Array("\r\n\r\n".utf8))
        let headText = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw HTTPClientError.protocolViolation("status line '\(headText)'")
        }
        let headers = lines.compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let response = HTTPResponse(status: status, headers: headers, body: [])
        if toHead || status == 204 || status == 304 || (100..<200).contains(status) { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            try fill(atLeast: length)
            let body = Array(buffer[..<length])
            buffer.removeFirst(length)
            return HTTPResponse(status: status, headers: headers, body: body)
        }
        throw HTTPClientError.protocolViolation("response without Content-Length")
    }

    /// Every byte the server sends until it closes the connection (or resets it), or, with
    /// `done`, until `done` holds for what has come (for a stream, which stays open). Raw: for
    /// comparing two servers byte for byte.
    public func readRaw(until done: (@Sendable ([UInt8]) -> Bool)? = nil) async throws -> [UInt8] {
        try await onQueue {
            while !(done?(self.buffer) ?? false) {
                do {
                    try self.readMore()
                } catch HTTPClientError.closedByPeer {
                    break
                }
            }
            defer { self.buffer.removeAll() }
            return self.buffer
        }
    }

    /// True when the server has closed its side (a read returns end of file without waiting).
    /// Asked with `poll`, not a peeking `recv` and `errno` (suspected when a keep-alive connection
    /// read as closed right after its answer, once, under ThreadSanitizer).
    public var isClosedByPeer: Bool {
        let peerClosed: Int16 = 0x2000  // POLLRDHUP, which Glibc's module leaves out (_GNU_SOURCE)
        var watch = pollfd(fd: descriptor, events: peerClosed, revents: 0)
        var ready: Int32
        repeat { ready = poll(&watch, 1, 0) } while ready < 0 && errno == EINTR
        let ended: Int16 = peerClosed | Int16(POLLHUP) | Int16(POLLERR)
        return ready > 0 && watch.revents & ended != 0
    }

    private func waitForCloseNow() -> Bool {
        var byte: UInt8 = 0
        while true {
            let result = recv(descriptor, &byte, 1, 0)
            if result == 0 { return true }
            if result < 0 && errno != EINTR { return errno == ECONNRESET }
        }
    }

    private func readUntil(_ marker: [UInt8]) throws -> Int {
        while true {
            if let range = buffer.firstRange(of: marker) { return range.lowerBound }
            try readMore()
        }
    }

    private func fill(atLeast count: Int) throws {
        while buffer.count < count { try readMore() }
    }

    /// A signal interrupts a socket call that has a timeout set even under SA_RESTART: such a
    /// call is made again, not taken for a hang-up.
    private func readMore() throws {
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var count = recv(descriptor, &chunk, chunk.count, 0)
        while count < 0 && errno == EINTR { count = recv(descriptor, &chunk, chunk.count, 0) }
        if count == 0 { throw HTTPClientError.closedByPeer }
        if count < 0 { throw errno == EAGAIN ? HTTPClientError.timedOut : HTTPClientError.closedByPeer }
        buffer.append(contentsOf: chunk[..<count])
    }
}

/// One request on a fresh connection.
public func httpRequest(
    port: Int, _ method: String, _ path: String, headers: [(String, String)] = [], body: [UInt8]? = nil
) async throws -> HTTPResponse {
    try await HTTPConnection(port: port).send(method, path, headers: headers, body: body)
}

/// Polls `condition` every 10 ms until it holds; false if it still does not after `seconds`
/// (times `sanitizerAllowance`). For waiting on things that happen by themselves (a timer, a
/// process), never for timing them. 30 s by default: every test runs at once on two cores, and a
/// task that awaits may wait behind the others' work for many seconds before it runs again.
public func eventually(within seconds: Double = 30, _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + .seconds(seconds * sanitizerAllowance)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
