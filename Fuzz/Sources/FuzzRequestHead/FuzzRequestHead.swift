// The hand-written request-head parser of the fast paths (`RequestHead`, docs/ARCHITECTURE.md)
// against libmicrohttpd, on the same bytes. A head the parser takes as plain is answered outside
// libmicrohttpd, so libmicrohttpd must take it too and read it the same way: the same method,
// path, query parameters, header values and body (a POST's), and the request ending at the same
// byte (a request sent right after it is the next one). A head the parser leaves to libmicrohttpd
// needs no check: it is libmicrohttpd's to answer. Any difference stops the run (a finding).
// Input: the request's bytes.
import Glibc
import Threading

@testable import MicroHTTP

/// What libmicrohttpd read of each request, recorded by the handler.
private final class Reading: HTTPHandler, @unchecked Sendable {
    struct Seen: Equatable {
        var method = ""
        var path = ""
        var headers: [String?] = []
        var query: [String?] = []
        /// Each name looked up with the one at the mirrored position, in one pass.
        var queryPairs: [String?] = []
        var body: [UInt8] = []
    }

    /// The header and query names to look up: the ones the parser found.
    let asked = Lock<(headers: [String], query: [String])>(([], []))
    let seen = Lock<[Seen]>([])

    func respond(to request: borrowing Request) -> Reply {
        let (headers, query) = asked.withLock { $0 }
        let seen = Seen(
            method: request.method, path: request.path, headers: headers.map { request.header($0) },
            query: query.map { request.queryParameter($0) },
            queryPairs: zip(query, query.reversed()).flatMap { first, second in
                let (one, other) = request.queryParameters(first, second)
                return [one, other]
            }, body: request.body)
        self.seen.withLock { $0.append(seen) }
        return .response(Response(status: 200))
    }
}

private let reading = Reading()
private let server: HTTPServer = {
    let configuration = ServerConfiguration(
        host: "127.0.0.1", port: 0, threads: 1, connectionTimeoutSeconds: 10, fastPaths: false)
    return try! HTTPServer(configuration: configuration, handler: reading)
}()

private let next = Array("GET /__next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)

/// Sends `bytes` on a fresh connection and reads until the server closes it.
private func exchange(_ bytes: [UInt8]) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    precondition(descriptor >= 0)
    defer { close(descriptor) }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(server.port).bigEndian
    address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
    let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
    }
    precondition(connected == 0, "connect: errno \(errno)")
    var offset = 0
    while offset < bytes.count {
        let sent = bytes[offset...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent < 0 && errno == EINTR { continue }
        guard sent > 0 else { return }  // closed early: what was seen says why
        offset += sent
    }
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = recv(descriptor, &chunk, chunk.count, 0)
        if count < 0 && errno == EINTR { continue }
        precondition(count >= 0 || errno != EAGAIN, "libmicrohttpd did not answer within 10 s")
        if count <= 0 { return }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestHead(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    let limit = Acceptor.headLimit
    guard case .plain(let head) = RequestHead.parse(bytes, limit: limit) else {
        if case .needMore = RequestHead.parse(bytes, limit: limit) {
            precondition(size < limit, "a head of \(size) bytes still waits for more")
        }
        return 0
    }
    let headers = head.headers
    let names = headers.map(\.name)
    let queryNames = head.queryText.split(separator: "&", omittingEmptySubsequences: false).map {
        String($0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0])
    }
    var expected = Reading.Seen(method: head.method.rawValue, path: head.pathText, body: head.bodyBytes)
    expected.headers = names.map { name in headers.first { $0.name.lowercased() == name.lowercased() }?.value }
    expected.query = queryNames.map { head.queryParameter($0) }
    expected.queryPairs = zip(queryNames, queryNames.reversed()).flatMap { first, second in
        let (one, other) = head.queryParameters(first, second)
        return [one, other]
    }
    reading.asked.withLock { $0 = (names, queryNames) }
    reading.seen.withLock { $0.removeAll() }
    exchange(Array(bytes[..<head.length]) + next)
    let seen = reading.seen.withLock { $0 }
    let shown = String(decoding: bytes[..<head.length], as: UTF8.self).debugDescription
    precondition(seen.count == 2, "libmicrohttpd read \(seen.count) requests, not the head and the next: \(shown)")
    precondition(seen[1].path == "/__next", "the next request was read as \(seen[1].path): \(shown)")
    precondition(
        seen[0] == expected, "libmicrohttpd read \(seen[0]), the fast path \(expected): \(shown)")
    return 0
}
