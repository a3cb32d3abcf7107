import CMicroHTTPD
import Glibc

/// One chunk of a chunked body written straight to a connection's socket, framed as
/// libmicrohttpd frames its chunks (`<hex length>\r\n<bytes>\r\n`), in one non-blocking `sendmsg`:
/// how a stream idle inside libmicrohttpd takes an event without a resume and an epoll round trip
/// (docs/ARCHITECTURE.md, "Event streams").
///
/// Only when the chunk surely fits whole: at most `maxBytes`, and the client has acknowledged
/// everything sent before (an empty send buffer takes 4 KiB at the very least). Otherwise nothing
/// is written and libmicrohttpd sends it, as it sends any body, when the socket drains.
enum DirectWrite {
    enum Outcome: Equatable {
        /// The whole chunk is in the socket's buffer.
        case written
        /// Not written: too large, or the client is behind. Nothing was sent.
        case notNow
        /// Part of the chunk was written, or the socket failed (the client left): the body cannot go
        /// on, the connection must be closed.
        case cutShort
    }

    static let maxBytes = 4096 - 32

    static func chunk(_ bytes: [UInt8], to descriptor: Int32) -> Outcome {
        // The client behind, or no telling (-1): libmicrohttpd sends it.
        guard bytes.count <= maxBytes, cmhd_unacknowledged_bytes(descriptor) == 0 else { return .notNow }
        // Up to 16 hex digits and CRLF.
        var header: (UInt64, UInt64, UInt64) = (0, 0, 0)
        let headerLength = withUnsafeMutableBytes(of: &header) { buffer in
            // The length in hex, written without a String: this runs once per subscriber per event.
            var digits = 1
            while bytes.count >> (4 * digits) != 0 { digits += 1 }
            for position in 0..<digits {
                let nibble = (bytes.count >> (4 * (digits - 1 - position))) & 0xF
                buffer[position] = nibble < 10 ? UInt8(48 + nibble) : UInt8(87 + nibble)
            }
            buffer[digits] = UInt8(ascii: "\r")
            buffer[digits + 1] = UInt8(ascii: "\n")
            return digits + 2
        }
        var trailer: UInt16 = 0x0A0D  // "\r\n" in memory order
        let total = headerLength + bytes.count + 2
        return withUnsafeMutableBytes(of: &header) { headerBytes in
            withUnsafeMutableBytes(of: &trailer) { trailerBytes in
                bytes.withUnsafeBytes { body in
                    var parts = [
                        iovec(iov_base: headerBytes.baseAddress, iov_len: headerLength),
                        iovec(iov_base: UnsafeMutableRawPointer(mutating: body.baseAddress), iov_len: body.count),
                        iovec(iov_base: trailerBytes.baseAddress, iov_len: 2),
                    ]
                    return parts.withUnsafeMutableBufferPointer { vector in
                        var message = msghdr()
                        message.msg_iov = vector.baseAddress
                        message.msg_iovlen = vector.count
                        while true {
                            let sent = sendmsg(descriptor, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                            if sent == total { return .written }
                            if sent < 0 && errno == EINTR { continue }
                            if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return .notNow }
                            return .cutShort
                        }
                    }
                }
            }
        }
    }
}
