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
    /// A read-only file of its own (docs/PERFORMANCE.md, "Images with sendfile"), sent with
    /// `sendfile`: the kernel takes the pages as they are, where `sendmsg` would copy the whole
    /// body into the socket on every request. For images. An unnamed file in `$TMPDIR` (or
    /// `/tmp`), else a sealed memory file, else a `buffer`.
    case file
}

/// A response built once and sent any number of times, from any thread: by a read loop as its
/// head and body bytes, by libmicrohttpd as a libmicrohttpd response (which it reference-counts,
/// copying nothing per request). Build one per content version for hot reads; build one per
/// request for everything else.
///
/// The body exists once: a buffer (`BodyBuffer`) held by this object and by the libmicrohttpd
/// response while it lives, or a file that response closes (which this object also maps, to
/// read it).
public final class PreparedResponse: @unchecked Sendable {
    public let status: Int
    public let headers: [HTTPHeader]
    /// The MHD_Response's address once made (0 before): the first time libmicrohttpd sends this
    /// answer (`handle`), or at once for a body in a file. A read loop needs none, and making one
    /// (each header copied into libmicrohttpd's list) was a tenth of a command's cost
    /// (docs/PERFORMANCE.md, "What a command costs"). This object owns a reference to it.
    private let madeHandle = Atomic<UInt>(0)
    /// The body's buffer; nil for a body in a file or a 304 made with `notModified`.
    private let bodyBuffer: BodyBuffer?
    /// The body's bytes, valid while this object lives; nil for a 304 made with `notModified`.
    private let bodyStart: UnsafeRawPointer?
    private let storedBodyCount: Int
    /// The read-only file holding the body, for `sendfile`: open while `handle` is (this object
    /// holds a reference to it); nil for a body in a buffer.
    let bodyFile: Int32?
    /// The head as a `ReadLoop` writes it, in libmicrohttpd's words and order: the status line,
    /// then (after the `Date` line, which the loop writes) the headers, `Content-Length` and the
    /// blank line.
    private let wireHead: UnsafeMutableRawBufferPointer
    private let statusLineCount: Int
    /// Whether it says `Connection: close`: the server then closes the connection once it is sent
    /// (RFC 9112, 9.6), as libmicrohttpd does; a read loop must too.
    let closesConnection: Bool

    /// Body files open at most (each a descriptor): beyond, bodies go in buffers. The server
    /// raises the open-file limit by as many.
    static let bodyFileLimit = 512
    private static let bodyFiles = Atomic<Int>(0)
    /// Where bodies' unnamed files are made: `$TMPDIR`, or `/tmp`.
    static let bodyFileDirectory: String = {
        guard let directory = getenv("TMPDIR").map({ String(cString: $0) }), !directory.isEmpty else { return "/tmp" }
        return directory
    }()

    /// Headers with a CR or LF in them are refused by libmicrohttpd and left out. For HEAD
    /// requests and 304 answers libmicrohttpd sends the body's length but not the body.
    public convenience init(_ response: Response, body storage: BodyStorage = .buffer) {
        self.init(response, body: storage, fileDirectory: Self.bodyFileDirectory)
    }

    /// `fileDirectory`: where a `.file` body's unnamed file is made.
    init(_ response: Response, body storage: BodyStorage, fileDirectory: String) {
        status = response.status
        headers = response.headers
        storedBodyCount = response.body.count
        if storage == .file, let file = BodyFile(holding: response.body, in: fileDirectory) {
            bodyBuffer = nil
            bodyStart = UnsafeRawPointer(file.mapping)
            bodyFile = file.descriptor
            // Made now: it owns the descriptor, which it closes when it goes.
            let handle = MHD_create_response_from_fd64(UInt64(storedBodyCount), file.descriptor)!
            Self.add(headers, to: handle)
            madeHandle.store(UInt(bitPattern: Int(bitPattern: handle)), ordering: .releasing)
        } else {
            let buffer = BodyBuffer(copying: response.body)
            bodyBuffer = buffer
            bodyStart = UnsafeRawPointer(buffer.start)
            bodyFile = nil
        }
        (wireHead, statusLineCount) = Self.wireHead(status: status, headers: headers, length: storedBodyCount)
        closesConnection = Self.saysClose(headers)
    }

    /// A 304 for a body of `length` bytes, without them: the one Content-Length RFC 9110 allows
    /// on a 304 is the 200's, which libmicrohttpd takes from the response's size (and never
    /// reads a 304's body, so the reader that would give it fails).
    public init(notModified headers: [HTTPHeader], bodyLength length: Int) {
        status = 304
        self.headers = headers
        storedBodyCount = length
        bodyBuffer = nil
        bodyStart = nil
        bodyFile = nil
        (wireHead, statusLineCount) = Self.wireHead(status: status, headers: headers, length: length)
        closesConnection = Self.saysClose(headers)
    }

    /// The libmicrohttpd response, made by the first caller (others that race it destroy theirs
    /// and take the one made first).
    var handle: OpaquePointer {
        let made = madeHandle.load(ordering: .acquiring)
        if made != 0 { return OpaquePointer(bitPattern: made)! }
        let handle: OpaquePointer
        if let bodyBuffer {
            // The buffer lives as long as the response that sends it: it holds a reference.
            let retained = Unmanaged.passRetained(bodyBuffer).toOpaque()
            handle = MHD_create_response_from_buffer_with_free_callback_cls(
                storedBodyCount, bodyBuffer.start, { Unmanaged<BodyBuffer>.fromOpaque($0!).release() }, retained)!
        } else {
            handle = MHD_create_response_from_callback(
                UInt64(storedBodyCount), 4096, { _, _, _, _ in -2 }, nil, nil)!
        }
        Self.add(headers, to: handle)
        let (stored, first) = madeHandle.compareExchange(
            expected: 0, desired: UInt(bitPattern: Int(bitPattern: handle)), successOrdering: .acquiringAndReleasing,
            failureOrdering: .acquiring)
        guard stored else {
            MHD_destroy_response(handle)
            return OpaquePointer(bitPattern: first)!
        }
        return handle
    }

    private static func add(_ headers: [HTTPHeader], to handle: OpaquePointer) {
        for header in headers {
            _ = MHD_add_response_header(handle, header.name, header.value)
        }
    }

    /// The head as a read loop writes it, and its status line's length.
    private static func wireHead(status: Int, headers: [HTTPHeader], length: Int) -> (
        UnsafeMutableRawBufferPointer, Int
    ) {
        // Bytes, not a String: a command builds its answer's head per request (docs/PERFORMANCE.md,
        // "What a command costs"), and copying a String's UTF-8 view goes byte by byte.
        var bytes = Array(WireHead.statusLine(status).utf8)
        let statusLineCount = bytes.count
        WireHead.appendHeaderLines(headers, to: &bytes)
        if status >= 200 && status != 204 {
            bytes += "Content-Length: \(length)\r\n\r\n".utf8
        } else {
            bytes += [13, 10]
        }
        let head = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 1)
        bytes.withUnsafeBytes { head.copyMemory(from: $0) }
        return (head, statusLineCount)
    }

    private static func saysClose(_ headers: [HTTPHeader]) -> Bool {
        headers.contains {
            RequestHead.equalsIgnoringCase($0.name.utf8, "connection".utf8)
                && RequestHead.equalsIgnoringCase($0.value.utf8, "close".utf8)
        }
    }

    /// `HTTP/1.1 200 OK` and its CRLF.
    var statusLine: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: wireHead[..<statusLineCount]) }

    /// The header lines after `Date`, through the blank line.
    var headerLines: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: wireHead[statusLineCount...]) }

    /// The whole response as a read loop writes it, `Date` now, its body a buffer's: for an answer
    /// written on a socket libmicrohttpd holds (a chunked body past its limit), off every hot path.
    var wireBytes: [UInt8] {
        Array(statusLine) + Array(WireHead.dateLine().utf8) + Array(headerLines) + Array(wireBody)
    }

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
            Self.bodyFiles.subtract(1, ordering: .relaxed)
        }
        let made = madeHandle.load(ordering: .acquiring)
        if made != 0 { MHD_destroy_response(OpaquePointer(bitPattern: made)!) }
        wireHead.deallocate()
    }

    /// A body's bytes in a buffer of their own, freed when the last of its holders goes (the
    /// prepared response, and the libmicrohttpd response made from it, which may still be sending
    /// it after the other has gone).
    private final class BodyBuffer {
        let start: UnsafeMutableRawPointer

        init(copying body: [UInt8]) {
            start = malloc(max(body.count, 1))!
            body.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress { start.copyMemory(from: source, byteCount: bytes.count) }
            }
        }

        deinit { free(start) }
    }

    /// A read-only file with a body in it, and its mapping. An unnamed file on the directory's
    /// file system first: a memory file's 4 KiB pages cost the client more to receive than the
    /// large pages of a file system's cache (docs/PERFORMANCE.md, "Images with sendfile"); a sealed
    /// memory file where the directory cannot have one (read-only, missing, no O_TMPFILE).
    private struct BodyFile {
        let descriptor: Int32
        let mapping: UnsafeMutableRawPointer

        /// Nil when the body is empty, `bodyFileLimit` files exist, or the system refuses.
        init?(holding body: [UInt8], in directory: String) {
            guard !body.isEmpty else { return nil }
            guard PreparedResponse.bodyFiles.add(1, ordering: .relaxed).newValue <= PreparedResponse.bodyFileLimit
            else {
                PreparedResponse.bodyFiles.subtract(1, ordering: .relaxed)
                return nil
            }
            var made = Self.unnamedFile(holding: body, in: directory)
            if made == nil { made = Self.sealedMemoryFile(holding: body) }
            guard let file = made else {
                PreparedResponse.bodyFiles.subtract(1, ordering: .relaxed)
                return nil
            }
            let mapping = mmap(nil, body.count, PROT_READ, MAP_SHARED, file.rawValue, 0)
            guard let mapping, mapping != MAP_FAILED else {
                PreparedResponse.bodyFiles.subtract(1, ordering: .relaxed)
                return nil
            }
            self.descriptor = file.release()
            self.mapping = mapping
        }

        /// An O_TMPFILE in `directory` (no name: nothing else can open it, and it goes with its
        /// last descriptor), written, then opened again read-only and the writable one closed:
        /// a plain file cannot be sealed, so no descriptor that could change it is kept.
        private static func unnamedFile(holding body: [UInt8], in directory: String) -> FileDescriptor? {
            guard
                let writable = try? FileDescriptor.open(
                    directory, cmhd_unnamed_file_flag() | O_RDWR | O_EXCL, permissions: 0o600),
                write(body, to: writable)
            else { return nil }
            return try? FileDescriptor.open("/proc/self/fd/\(writable.rawValue)", O_RDONLY)
        }

        /// A memory file, written, then sealed: it can no longer change. Sealed before it is
        /// mapped: a shared mapping, even a read-only one, keeps the write seal from being added.
        private static func sealedMemoryFile(holding body: [UInt8]) -> FileDescriptor? {
            guard case .success(let raw) = systemCall({ cmhd_memory_file("response-body") }) else { return nil }
            let file = FileDescriptor(adopting: raw)
            guard write(body, to: file), cmhd_seal_memory_file(file.rawValue) == 0 else { return nil }
            return file
        }

        private static func write(_ body: [UInt8], to file: borrowing FileDescriptor) -> Bool {
            body.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    guard
                        case .success(let count) = systemCall({
                            pwrite(file.rawValue, bytes.baseAddress! + offset, bytes.count - offset, off_t(offset))
                        })
                    else { return false }
                    offset += count
                }
                return true
            }
        }
    }
}

/// The lines of a response head as libmicrohttpd writes them, for the responses this server
/// writes itself (a `ReadLoop`'s answers, the heads of streams the `Acceptor` holds).
enum WireHead {
    /// `HTTP/1.1 200 OK` and its CRLF.
    static func statusLine(_ status: Int) -> String {
        (100...599).contains(status) ? statusLines[status - 100] : line(status)
    }

    /// The lines of every three-digit status, made once: responses are built per request.
    private static let statusLines = (100...599).map(line)

    private static func line(_ status: Int) -> String {
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
        var lines: [UInt8] = []
        appendHeaderLines(headers, to: &lines)
        return String(decoding: lines, as: UTF8.self)
    }

    /// `headerLines` as bytes, appended to `bytes`.
    static func appendHeaderLines(_ headers: [HTTPHeader], to bytes: inout [UInt8]) {
        for header in headers where !breaksLine(header.name) && !breaksLine(header.value) {
            bytes += header.name.utf8
            bytes += [UInt8(ascii: ":"), UInt8(ascii: " ")]
            bytes += header.value.utf8
            bytes += [13, 10]
        }
    }

    private static func breaksLine(_ text: String) -> Bool {
        let breaks = { (byte: UInt8) in byte == UInt8(ascii: "\r") || byte == UInt8(ascii: "\n") }
        return text.utf8.withContiguousStorageIfAvailable { $0.contains(where: breaks) }
            ?? text.utf8.contains(where: breaks)
    }
}
