import CMicroHTTPD
import Glibc
import Platform

/// The listening socket, created here rather than by libmicrohttpd so that a failure to bind
/// comes back as a typed error with the errno, and port 0 can be read back.
struct ListenSocket {
    let descriptor: Int32
    let port: Int

    static func open(host: String, port: Int, backlog: Int) throws(HTTPServerError) -> ListenSocket {
        guard (0...65535).contains(port) else {
            throw .invalidConfiguration("port \(port) is not in 0...65535")
        }
        var hints = addrinfo()
        hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .cannotResolve(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }

        var lastError: Int32 = EADDRNOTAVAIL
        var candidate: UnsafeMutablePointer<addrinfo>? = first
        while let info = candidate {
            candidate = info.pointee.ai_next
            switch bindAndListen(info.pointee, backlog: backlog) {
            case .success(let socket): return socket
            case .failure(let error): lastError = error.code
            }
        }
        throw .cannotListen(host: host, port: port, errno: lastError)
    }

    private static func bindAndListen(_ info: addrinfo, backlog: Int) -> Result<ListenSocket, Int32Error> {
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue)
        let raw = socket(info.ai_family, type, 0)
        guard raw >= 0 else { return .failure(Int32Error(errno)) }
        // Closed on every way out but success, which hands it to the server.
        let socket = FileDescriptor(adopting: raw)
        var on: Int32 = 1
        var off: Int32 = 0
        setsockopt(socket.rawValue, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if info.ai_family == AF_INET6 {
            // `::` should also accept IPv4 clients, whatever the system default says.
            setsockopt(socket.rawValue, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size))
        }
        guard bind(socket.rawValue, info.ai_addr, info.ai_addrlen) == 0,
            listen(socket.rawValue, Int32(clamping: backlog)) == 0
        else {
            let code = errno
            return .failure(Int32Error(code))
        }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.rawValue, $0, &length) }
        }
        guard named == 0 else {
            let code = errno
            return .failure(Int32Error(code))
        }
        // sin_port and sin6_port sit at the same offset.
        let port = withUnsafePointer(to: &address) { storage in
            storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                Int(UInt16(bigEndian: $0.pointee.sin_port))
            }
        }
        return .success(ListenSocket(descriptor: socket.release(), port: port))
    }
}

/// An errno carried through `Result`.
struct Int32Error: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}
