import CMicroHTTPD
import Glibc

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

/// A response built once as a libmicrohttpd response and queued any number of times, from any
/// thread (libmicrohttpd reference-counts it and copies nothing per request). Build one per
/// content version for hot reads; build one per request for everything else.
///
/// The body exists once: copied into a buffer that libmicrohttpd sends from and frees when its
/// last reference (ours, or a connection still sending it) goes.
public final class PreparedResponse: @unchecked Sendable {
    public let status: Int
    public let headers: [HTTPHeader]
    /// The MHD_Response this object owns a reference to; immutable after init, so sharing it is safe.
    let handle: OpaquePointer
    /// The body's buffer, owned by `handle`: valid while this object holds its reference.
    private let bodyStart: UnsafeMutableRawPointer
    private let storedBodyCount: Int
    /// The head as a `ReadLoop` writes it, in libmicrohttpd's words and order: the status line,
    /// then (after the `Date` line, which the loop writes) the headers, `Content-Length` and the
    /// blank line.
    private let wireHead: UnsafeMutableRawBufferPointer
    private let statusLineCount: Int

    /// Headers with a CR or LF in them are refused by libmicrohttpd and left out. For HEAD
    /// requests and 304 answers libmicrohttpd sends the body's length but not the body.
    public init(_ response: Response) {
        status = response.status
        headers = response.headers
        let count = response.body.count
        let buffer = malloc(max(count, 1))!
        response.body.withUnsafeBytes { bytes in
            if let source = bytes.baseAddress { buffer.copyMemory(from: source, byteCount: bytes.count) }
        }
        storedBodyCount = count
        bodyStart = buffer
        handle = MHD_create_response_from_buffer_with_free_callback(count, buffer) { free($0) }!
        for header in response.headers {
            _ = MHD_add_response_header(handle, header.name, header.value)
        }
        let statusLine = WireHead.statusLine(status)
        var lines = WireHead.headerLines(response.headers)
        if status >= 200 && status != 204 { lines += "Content-Length: \(count)\r\n" }
        lines += "\r\n"
        statusLineCount = statusLine.utf8.count
        wireHead = .allocate(byteCount: statusLineCount + lines.utf8.count, alignment: 1)
        _ = wireHead.initializeMemory(as: UInt8.self, from: (statusLine + lines).utf8)
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

    /// A copy of the body, as libmicrohttpd sends it.
    public var body: [UInt8] { Array(UnsafeRawBufferPointer(start: bodyStart, count: storedBodyCount)) }

    /// The body's length in bytes.
    public var bodyCount: Int { storedBodyCount }

    /// A copy of the bytes of the body in `range` (a byte range request's).
    public func body(in range: Range<Int>) -> [UInt8] {
        Array(UnsafeRawBufferPointer(start: bodyStart, count: storedBodyCount)[range])
    }

    /// The response as plain values (a copy).
    public var response: Response { Response(status: status, headers: headers, body: body) }

    deinit {
        MHD_destroy_response(handle)
        wireHead.deallocate()
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
