import CMicroHTTPD
import Glibc
import Platform

/// A client's address, as `accept` or `getpeername` gives it: what libmicrohttpd is handed with a
/// connection (`handOver`), and whether it is this host.
struct PeerAddress {
    let storage: sockaddr_storage
    let length: socklen_t

    init(storage: sockaddr_storage, length: socklen_t) {
        (self.storage, self.length) = (storage, length)
    }

    /// The address of the client connected on `descriptor`; nil when it is no longer connected.
    init?(peerOf descriptor: Int32) {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let found = withUnsafeMutablePointer(to: &storage) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
        }
        guard found == 0 else { return nil }
        (self.storage, self.length) = (storage, length)
    }

    var isLoopback: Bool {
        withUnsafePointer(to: storage) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) { cmhd_address_is_loopback($0) != 0 }
        }
    }

    /// Gives the connection on `descriptor` to libmicrohttpd, whatever it has not read yet
    /// unread; the caller no longer watches it. On failure libmicrohttpd has closed the socket (at
    /// its connection limit, or stopping), which is logged.
    func handOver(
        _ descriptor: Int32, to daemon: OpaquePointer, errorLog: (@Sendable (ServerLogLevel, String) -> Void)?
    ) {
        let added = withUnsafePointer(to: storage) { storage in
            storage.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                MHD_add_connection(daemon, descriptor, $0, length)
            }
        }
        if added != .YES {
            errorLog?(.notice, "libmicrohttpd refused a connection: \(Errno(errno))")
        }
    }
}
