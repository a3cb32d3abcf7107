import CMicroHTTPD
import Glibc
import Platform

/// An event on its way to many streams: its bytes, and the same bytes framed as one chunk of a
/// chunked body (`<hex length>\r\n<bytes>\r\n`, as libmicrohttpd frames its chunks). A broadcast
/// frames it once, and every subscriber's write or queue shares that one array.
struct FramedChunk: Sendable {
    let bytes: [UInt8]
    let frame: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
        frame = DirectWrite.frame(bytes)
    }
}

/// One chunk of a chunked body written straight to a stream's socket, in one non-blocking `send`
/// of its frame (docs/ARCHITECTURE.md, "Event streams").
///
/// `chunk` is how a stream idle inside libmicrohttpd takes an event without a resume and an epoll
/// round trip: only when the chunk surely fits whole (at most `maxBytes`, and the client has
/// acknowledged everything sent before: an empty send buffer takes 4 KiB at the very least);
/// otherwise nothing is written and libmicrohttpd sends it, as it sends any body, when the socket
/// drains. `write` is how a stream on the acceptor's socket writes: as much as the socket takes,
/// the rest queued by the stream.
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

    static func chunk(_ chunk: FramedChunk, to descriptor: Int32) -> Outcome {
        // The client behind, or no telling (-1): libmicrohttpd sends it.
        guard chunk.bytes.count <= maxBytes, cmhd_unacknowledged_bytes(descriptor) == 0 else { return .notNow }
        let sent = write(chunk.frame, to: descriptor)
        if sent == chunk.frame.count { return .written }
        return sent == 0 ? .notNow : .cutShort
    }

    /// Writes as much of `bytes` as the socket takes at once: the count written (0 when the socket
    /// is full), or -1 when the socket failed (the client left).
    static func write(_ bytes: [UInt8], to descriptor: Int32) -> Int {
        bytes.withUnsafeBytes { write($0, to: descriptor) }
    }

    static func write(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> Int {
        switch systemCall({ send(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL)) }) {
        case .success(let sent): return sent
        case .failure(let error): return error.wouldBlock ? 0 : -1
        }
    }

    /// `bytes` framed as one chunk, in one array.
    static func frame(_ bytes: [UInt8]) -> [UInt8] {
        var frame = [UInt8](repeating: 0, count: frameLength(of: bytes.count))
        frame.withUnsafeMutableBytes { buffer in
            let headerLength = writeSize(of: bytes.count, into: buffer)
            buffer.baseAddress!.advanced(by: headerLength).copyMemory(from: bytes, byteCount: bytes.count)
            buffer[headerLength + bytes.count] = UInt8(ascii: "\r")
            buffer[headerLength + bytes.count + 1] = UInt8(ascii: "\n")
        }
        return frame
    }

    /// The whole frame's length: size line, bytes, CRLF.
    private static func frameLength(of count: Int) -> Int {
        hexDigits(of: count) + 2 + count + 2
    }

    /// The length in hex and CRLF, written without a String; returns how many bytes that took.
    private static func writeSize(of count: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let digits = hexDigits(of: count)
        for position in 0..<digits {
            let nibble = (count >> (4 * (digits - 1 - position))) & 0xF
            buffer[position] = nibble < 10 ? UInt8(48 + nibble) : UInt8(87 + nibble)
        }
        buffer[digits] = UInt8(ascii: "\r")
        buffer[digits + 1] = UInt8(ascii: "\n")
        return digits + 2
    }

    private static func hexDigits(of count: Int) -> Int {
        var digits = 1
        while count >> (4 * digits) != 0 { digits += 1 }
        return digits
    }
}
