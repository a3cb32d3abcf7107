import CMicroHTTPD
import Glibc
import Platform
import Synchronization

/// An HTTP response as plain values. Queued through a `PreparedResponse`.
public struct Response: Sendable {
    public var status: Int
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// Where a prepared response keeps its body.
public enum BodyStorage: Sendable {
    /// A buffer, written with the head in one `sendmsg`: right for a few kilobytes.
    case buffer
    /// A sealed memory file (docs/PERFORMANCE.md, "Files from memory files"), sent with
    /// `sendfile`: the kernel takes the pages as they are, where `sendmsg` would copy the whole
    /// body into the socket on every request. For images. A `buffer` when the file cannot be made.
    case memoryFile
}

/// A response built once as a libmicrohttpd response and queued any number of times, from any
/// thread (libmicrohttpd reference-counts it and copies nothing per request). Build one per
/// content version for hot reads; build one per request for everything else.
///
/// The body exists once, owned by the libmicrohttpd response and released when its last
/// reference (ours, or a connection still sending it) goes: a buffer it frees, or a memory file
/// it closes (which this object also maps, to read it).
public final class PreparedResponse: @unchecked Sendable {
    public let status: Int
    public let headers: [HTTPHeader]
    /// The MHD_Response this object owns a reference to; immutable after init, so sharing it is safe.
    let handle: OpaquePointer
    /// The body's bytes, valid while this object lives; nil for a 304 made with `notModified`.
    private let bodyStart: UnsafeRawPointer?
    private let storedBodyCount: Int
    /// The memory file holding the body, for `sendfile`: open while `handle` is (this object holds
    /// a reference to it); nil for a body in a buffer.
    let bodyFile: Int32?
    /// The head as a `ReadLoop` writes it, in libmicrohttpd's words and order: the status line,
    /// then (after the `Date` line, which the loop writes) the headers, `Content-Length` and the
    /// blank line.
    private let wireHead: UnsafeMutableRawBufferPointer
    private let statusLineCount: Int

    /// Memory files alive at most (each an open descriptor): beyond, bodies go in buffers. The
    /// server raises the open-file limit by as many.
    static let memoryFileLimit = 512
    private static let memoryFiles = Atomic<Int>(0)

    /// Headers with a CR or LF in them are refused by libmicrohttpd and left out. For HEAD
    /// requests and 304 answers libmicrohttpd sends the body's length but not the body.
    public init(_ response: Response, body storage: BodyStorage = .buffer) {
        status = response.status
        headers = response.headers
        storedBodyCount = response.body.count
        if storage == .memoryFile, let file = MemoryFile(holding: response.body) {
            bodyStart = UnsafeRawPointer(file.mapping)
            bodyFile = file.descriptor
            handle = MHD_create_response_from_fd64(UInt64(storedBodyCount), file.descriptor)!
        } else {
            let buffer = malloc(max(storedBodyCount, 1))!
            response.body.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress { buffer.copyMemory(from: source, byteCount: bytes.count) }
            }
            bodyStart = UnsafeRawPointer(buffer)
            bodyFile = nil
            handle = MHD_create_response_from_buffer_with_free_callback(storedBodyCount, buffer) { free($0) }!
        }
        (wireHead, statusLineCount) = Self.prepare(handle, status: status, headers: headers, length: storedBodyCount)
    }

    /// A 304 for a body of `length` bytes, without them: the one Content-Length RFC 9110 allows
    /// on a 304 is the 200's, which libmicrohttpd takes from the response's size (and never
    /// reads a 304's body, so the reader that would give it fails).
    public init(notModified headers: [HTTPHeader], bodyLength length: Int) {
        status = 304
        self.headers = headers
        storedBodyCount = length
        bodyStart = nil
        bodyFile = nil
        handle = MHD_create_response_from_callback(UInt64(length), 4096, { _, _, _, _ in -2 }, nil, nil)!
        (wireHead, statusLineCount) = Self.prepare(handle, status: status, headers: headers, length: length)
    }

    /// Adds `headers` to `handle`; the head as a read loop writes it, and its status line's length.
    private static func prepare(
        _ handle: OpaquePointer, status: Int, headers: [HTTPHeader], length: Int
    ) -> (UnsafeMutableRawBufferPointer, Int) {
        for header in headers {
            _ = MHD_add_response_header(handle, header.name, header.value)
        }
        let statusLine = WireHead.statusLine(status)
        var lines = WireHead.headerLines(headers)
        if status >= 200 && status != 204 { lines += "Content-Length: \(length)\r\n" }
        lines += "\r\n"
        let head = UnsafeMutableRawBufferPointer.allocate(
            byteCount: statusLine.utf8.count + lines.utf8.count, alignment: 1)
        _ = head.initializeMemory(as: UInt8.self, from: (statusLine + lines).utf8)
        return (head, statusLine.utf8.count)
    }

    /// `HTTP/1.1 200 OK` and its CRLF.
    var statusLine: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: wireHead[..<statusLineCount]) }

    /// The header lines after `Date`, through the blank line.
    var headerLines: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: wireHead[statusLineCount...]) }

    /// The body as sent to a GET: none for a 304, a 204 or a 1xx, which carry none.
    var wireBody: UnsafeRawBufferPointer {
        status >= 200 && status != 204 && status != 304
            ? UnsafeRawBufferPointer(start: bodyStart, count: storedBodyCount)
            : UnsafeRawBufferPointer(start: nil, count: 0)
    }

    /// A copy of the body, as libmicrohttpd sends it (none for a 304 made with `notModified`).
    public var body: [UInt8] {
        guard let bodyStart else { return [] }
        return Array(UnsafeRawBufferPointer(start: bodyStart, count: storedBodyCount))
    }

    /// The body's length in bytes.
    public var bodyCount: Int { storedBodyCount }

    /// A copy of the bytes of the body in `range` (a byte range request's).
    public func body(in range: Range<Int>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: bodyStart, count: bodyStart == nil ? 0 : storedBodyCount)[range])
    }

    /// The response as plain values (a copy).
    public var response: Response { Response(status: status, headers: headers, body: body) }

    deinit {
        if bodyFile != nil {
            munmap(UnsafeMutableRawPointer(mutating: bodyStart), storedBodyCount)
            Self.memoryFiles.subtract(1, ordering: .relaxed)
        }
        MHD_destroy_response(handle)
        wireHead.deallocate()
    }

    /// A sealed memory file with a body in it, and its mapping.
    private struct MemoryFile {
        let descriptor: Int32
        let mapping: UnsafeMutableRawPointer

        /// Nil when the body is empty, `memoryFileLimit` files exist, or the system refuses.
        init?(holding body: [UInt8]) {
            guard !body.isEmpty else { return nil }
            guard PreparedResponse.memoryFiles.add(1, ordering: .relaxed).newValue <= PreparedResponse.memoryFileLimit,
                case .success(let descriptor) = systemCall({ cmhd_memory_file("response-body") })
            else {
                PreparedResponse.memoryFiles.subtract(1, ordering: .relaxed)
                return nil
            }
            let written = body.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    guard
                        case .success(let count) = systemCall({
                            pwrite(descriptor, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
                        })
                    else { return false }
                    offset += count
                }
                return true
            }
            // Sealed before it is mapped: a shared mapping, even a read-only one, keeps the
            // write seal from being added (EBUSY).
            let sealed = written && cmhd_seal_memory_file(descriptor) == 0
            let mapping = sealed ? mmap(nil, body.count, PROT_READ, MAP_SHARED, descriptor, 0) : MAP_FAILED
            guard let mapping, mapping != MAP_FAILED else {
                close(descriptor)
                PreparedResponse.memoryFiles.subtract(1, ordering: .relaxed)
                return nil
            }
            self.descriptor = descriptor
            self.mapping = mapping
        }
    }
}

/// The lines of a response head as libmicrohttpd writes them, for the responses this server
/// writes itself (a `ReadLoop`'s answers, the heads of streams the `Acceptor` holds).
enum WireHead {
    /// `HTTP/1.1 200 OK` and its CRLF.
    static func statusLine(_ status: Int) -> String {
        let reason = MHD_get_reason_phrase_for(UInt32(status)).map { String(cString: $0) } ?? ""
        return "HTTP/1.1 \(status) \(reason)\r\n"
    }

    /// `Date: …` for now and its CRLF; empty if the clock cannot be read.
    static func dateLine() -> String {
        var date = [CChar](repeating: 0, count: 40)
        let length = cmhd_http_date(&date, date.count)
        guard length > 0 else { return "" }
        return "Date: \(String(decoding: date[..<length].map(UInt8.init(bitPattern:)), as: UTF8.self))\r\n"
    }

    /// Each header and its CRLF; one with a CR or LF byte in it is left out, as libmicrohttpd
    /// refuses it (other line separators, such as U+2028, it sends as they are, and so does this).
    static func headerLines(_ headers: [HTTPHeader]) -> String {
        let breaksLine = { (byte: UInt8) in byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") }
        var lines = ""
        for header in headers
        where !header.name.utf8.contains(where: breaksLine) && !header.value.utf8.contains(where: breaksLine) {
            lines += header.name + ": " + header.value + "\r\n"
        }
        return lines
    }
}
