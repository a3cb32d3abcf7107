import Glibc
import MicroHTTP
import Platform

/// A minimal HTTP/1.1 GET for health checks: one request, one connection, a hard timeout, the
/// status and body back. No keep-alive, no redirects, no chunked bodies.
public enum HTTPProbe {
    public struct Answer: Sendable, Equatable {
        public let status: Int
        public let body: [UInt8]
    }

    /// GETs `path` from `host:port`; a wildcard address (`0.0.0.0`, `::`) means this machine.
    public static func get(host: String, port: Int, path: String, timeoutSeconds: Int = 2) -> Result<Answer, ProbeError>
    {
        let target = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        var hints = addrinfo()
        hints.ai_flags = AI_NUMERICSERV
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(target, String(port), &hints, &list) == 0, let first = list else {
            return .failure(.cannotResolve(target))
        }
        defer { freeaddrinfo(list) }
        let raw = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard raw >= 0 else { return .failure(.cannotConnect(target, port, errno)) }
        let connection = FileDescriptor(adopting: raw)
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(connection.rawValue, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(connection.rawValue, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(connection.rawValue, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            return .failure(.cannotConnect(target, port, errno))
        }
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(target)\r\nConnection: close\r\n\r\n".utf8)
        guard send(connection.rawValue, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            return .failure(.noAnswer)
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while received.count < 1 << 20 {
            let count = recv(connection.rawValue, &chunk, chunk.count, 0)
            guard count > 0 else { break }  // end of answer (Connection: close), or the timeout
            received += chunk[..<count]
        }
        guard let headEnd = received.firstRange(of: Array("\r\n\r\n".utf8)),
            let statusLine = String(validating: received[..<headEnd.lowerBound], as: UTF8.self)?
                .split(separator: "\r\n").first,
            statusLine.hasPrefix("HTTP/1."),
            let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "")
        else { return .failure(.noAnswer) }
        return .success(Answer(status: status, body: Array(received[headEnd.upperBound...])))
    }

    public enum ProbeError: Error, Equatable, CustomStringConvertible {
        case cannotResolve(String)
        case cannotConnect(String, Int, Int32)
        case noAnswer

        public var description: String {
            switch self {
            case .cannotResolve(let host): "cannot resolve \(host)"
            case .cannotConnect(let host, let port, let code):
                "cannot connect to \(host):\(port): \(Errno(code).explained)"
            case .noAnswer: "no HTTP answer within the timeout"
            }
        }
    }
}
