import Foundation
import Glibc
import Threading

/// A webhook receiver on 127.0.0.1 for the tests (docs/WEBHOOKS.md): an HTTP/1.1 server that
/// keeps every request it reads and answers each with the status `answer` gives (by the request's
/// number, from 0), or holds it unanswered until `stop` when `answer` gives nil. One connection at
/// a time, each closed after its answer.
public final class WebhookReceiver: Sendable {
    public struct Received: Sendable {
        public let method: String
        public let target: String
        /// Header names in lowercase.
        public let headers: [String: String]
        public let body: String
    }

    public let port: Int
    private let listener: Int32
    private let answer: @Sendable (Int) -> Int?
    private let state = Lock(State())
    private let done = DispatchSemaphore(value: 0)

    private struct State {
        var received: [Received] = []
        var stopped = false
        var held: [Int32] = []
    }

    /// Listens on `port` (0: any free one).
    public init(port: Int = 0, answer: @escaping @Sendable (Int) -> Int? = { _ in 204 }) throws {
        try TestTier.needs("a socket")
        self.answer = answer
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw HTTPClientError.connectFailed(errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let error = errno
            close(fd)
            throw HTTPClientError.connectFailed(error)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        self.port = Int(UInt16(bigEndian: address.sin_port))
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// The requests read so far, in order.
    public var received: [Received] { state.withLock { $0.received } }

    /// Stops listening (the port refuses connections from now on) and lets go of held requests.
    public func stop() {
        let held = state.withLock { state in
            defer { state.held = [] }
            state.stopped = true
            return state.held
        }
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
        for fd in held { close(fd) }
    }

    private func acceptLoop() {
        defer { done.signal() }
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                return
            }
            if state.withLock({ $0.stopped }) {
                close(connection)
                return
            }
            serve(connection)
        }
    }

    private func serve(_ fd: Int32) {
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var request: Received?
        while request == nil {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { break }
            bytes += buffer[0..<count]
            request = Self.parse(bytes)
        }
        guard let request else {
            close(fd)
            return
        }
        let number = state.withLock { state in
            state.received.append(request)
            return state.received.count - 1
        }
        guard let status = answer(number) else {
            let stopped = state.withLock { state in
                if !state.stopped { state.held.append(fd) }
                return state.stopped
            }
            if stopped { close(fd) }
            return
        }
        let extra = (300..<400).contains(status) ? "Location: http://127.0.0.1:\(port)/moved\r\n" : ""
        let response = Array("HTTP/1.1 \(status) Answer\r\nContent-Length: 0\r\n\(extra)Connection: close\r\n\r\n".utf8)
        _ = response.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        close(fd)
    }

    /// A whole request in `bytes` (head and `Content-Length` body), or nil while incomplete.
    private static func parse(_ bytes: [UInt8]) -> Received? {
        let separator = Array("\r\n\r\n".utf8)
        guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
        let lines = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = end + separator.count
        guard bytes.count >= bodyStart + length else { return nil }
        return Received(
            method: requestLine.first.map(String.init) ?? "",
            target: requestLine.dropFirst().first.map(String.init) ?? "",
            headers: headers, body: String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self))
    }
}

/// HMAC-SHA256 of `message` under `key` by Python's `hmac` module: an independent check of the
/// service's own (docs/WEBHOOKS.md, verifying a signature). Run with `ServerProcess` (posix_spawn:
/// Foundation's Process reads past a buffer under AddressSanitizer).
public func pythonHMAC(key: String, message: String) async throws -> String {
    let script =
        "import hmac, hashlib, os, sys; "
        + "print(hmac.new(os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2]), hashlib.sha256).hexdigest())"
    let python = try ServerProcess(
        executable: URL(fileURLWithPath: "/usr/bin/python3"), arguments: ["-c", script, key, message],
        environment: ["LC_ALL": "C.UTF-8"])
    guard await python.waitForExit(seconds: 30) == 0 else {
        throw HTTPClientError.protocolViolation("python3's hmac failed: \(python.standardError)")
    }
    return python.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Whether `signature` (`t=…,v1=…`) signs `body` with `secret`, by `pythonHMAC`.
public func signatureHolds(_ signature: String?, secret: String, body: String) async throws -> Bool {
    guard let signature else { return false }
    let parts = Dictionary(
        signature.split(separator: ",").compactMap { part -> (String, String)? in
            let pair = part.split(separator: "=", maxSplits: 1)
            return pair.count == 2 ? (String(pair[0]), String(pair[1])) : nil
        }, uniquingKeysWith: { first, _ in first })
    guard let t = parts["t"], Int64(t) != nil, let v1 = parts["v1"] else { return false }
    return try await pythonHMAC(key: secret, message: "\(t).\(body)") == v1
}
