import Glibc

/// The head of a request peeked at by the `Acceptor` or a `ReadLoop`, as far as they need it:
/// enough to tell a request this server answers outside libmicrohttpd (a subscription to an event
/// stream, a read answered at once) from anything else, which goes to libmicrohttpd untouched
/// (docs/ARCHITECTURE.md, "Event streams outside libmicrohttpd", "Reads outside libmicrohttpd").
///
/// Deliberately narrow: only a plain `GET` or `HEAD` over HTTP/1.1, with a Host, no body, a target
/// that needs no decoding and headers on one line each is `.plain` — or such a `POST` with no
/// body or one plain decimal `Content-Length` whose whole body has arrived with its head (a
/// screen's report, a command: docs/ARCHITECTURE.md, "Reports outside libmicrohttpd"). Anything unusual (percent-encoding,
/// folded or odd header lines, a chunked or oversize body, `Connection: close`, `Expect`,
/// `Upgrade`) is `.other`, so libmicrohttpd and the dispatcher answer it exactly as they always
/// have.
///
/// Parsing allocates nothing: the head is positions in the bytes it was parsed from, which must
/// outlive it (`Request` reads its headers from them).
struct RequestHead {
    let method: Method
    let bytes: UnsafeRawBufferPointer
    /// The target's path: from its `/` to the `?` or the space.
    let path: Range<Int>
    /// After the `?`; empty when there is none.
    let query: Range<Int>
    /// The header lines, each with its CRLF.
    let headerLines: Range<Int>
    /// The body (a POST's); empty for a GET or HEAD.
    let body: Range<Int>
    /// Bytes from the request's first byte to the end of its body (of the blank line after the
    /// headers, without one): the request's whole length on the socket.
    let length: Int

    enum Method: String {
        case get = "GET"
        case head = "HEAD"
        case post = "POST"
    }

    enum Parsing {
        /// Not enough bytes yet to tell.
        case needMore
        /// Not plain: libmicrohttpd answers it.
        case other
        case plain(RequestHead)
    }

    /// What a head costs libmicrohttpd's memory pool beyond its bytes: a record for each header
    /// (measured on 0.9.75: a head is refused once its bytes plus 64 per record pass about 300
    /// bytes short of the pool; the query costs none, `QueryString`), and room for the response's
    /// head after it.
    /// A head that might not fit is left to libmicrohttpd, which then answers it as it would any
    /// other: the fast paths never answer one that libmicrohttpd would refuse.
    static let recordCost = 64
    static let responseRoom = 1024

    /// Parses the bytes received so far; `limit` is how many bytes a request may take before it
    /// is left to libmicrohttpd, `poolSize` libmicrohttpd's memory per connection
    /// (`ServerConfiguration.connectionMemoryLimit`), `maxBodySize` the largest body the server
    /// takes (`ServerConfiguration.maxBodySize`: a larger one is libmicrohttpd's to refuse).
    static func parse(
        _ bytes: UnsafeRawBufferPointer, limit: Int, poolSize: Int = 16 * 1024, maxBodySize: Int = 16 * 1024
    ) -> Parsing {
        let method: Method
        switch (startsWith(bytes, "GET /"), startsWith(bytes, "HEAD /"), startsWith(bytes, "POST /")) {
        case (.some(true), _, _): method = .get
        case (_, .some(true), _): method = .head
        case (_, _, .some(true)): method = .post
        case (.some(false), .some(false), .some(false)): return .other
        default: return .needMore
        }
        let incomplete: Parsing = bytes.count < limit ? .needMore : .other
        let targetStart = method.rawValue.utf8.count + 1
        guard let lineEnd = lineEnd(in: bytes, from: targetStart) else {
            return hasBareLineFeed(bytes, from: targetStart) ? .other : incomplete
        }
        let version: StaticString = " HTTP/1.1"
        guard lineEnd - targetStart > version.utf8CodeUnitCount,
            matches(bytes, at: lineEnd - version.utf8CodeUnitCount, version)
        else { return .other }
        let targetEnd = lineEnd - version.utf8CodeUnitCount
        var pathEnd = targetEnd
        for index in targetStart..<targetEnd {
            let byte = bytes[index]
            guard isPlainTargetByte(byte) else { return .other }
            if byte == UInt8(ascii: "?") && pathEnd == targetEnd { pathEnd = index }
        }
        var records = 0  // libmicrohttpd's, one per header (the query is read outside it: QueryString)
        var hasHost = false
        var hasOrigin = false
        var hasFetchSite = false
        var contentLength: Int?
        var start = lineEnd + 2
        while true {
            guard let end = Self.lineEnd(in: bytes, from: start) else {
                return hasBareLineFeed(bytes, from: start) ? .other : incomplete
            }
            if end == start { break }  // the blank line
            guard let colon = headerColon(in: bytes, start..<end) else { return .other }
            let name = UnsafeRawBufferPointer(rebasing: bytes[start..<colon])
            if equalsIgnoringCase(name, "host".utf8) {
                guard !hasHost else { return .other }  // two Hosts: libmicrohttpd's path refuses them
                hasHost = true
            } else if equalsIgnoringCase(name, "origin".utf8) {
                guard !hasOrigin else { return .other }  // two Origins: libmicrohttpd's path refuses them
                hasOrigin = true
            } else if equalsIgnoringCase(name, "sec-fetch-site".utf8) {
                guard !hasFetchSite else { return .other }  // the same
                hasFetchSite = true
            } else if method == .post && contentLength == nil && equalsIgnoringCase(name, "content-length".utf8) {
                guard let length = plainLength(bytes, (colon + 1)..<end), length <= maxBodySize else { return .other }
                contentLength = length
            } else if asksForMore(name) {
                return .other  // a body where none belongs, a second Content-Length, chunks, Expect, Upgrade
            } else if equalsIgnoringCase(name, "connection".utf8),
                containsIgnoringCase(UnsafeRawBufferPointer(rebasing: bytes[colon..<end]), "close")
            {
                return .other
            }
            records += 1
            start = end + 2
        }
        let headEnd = start + 2
        // A request with neither Content-Length nor Transfer-Encoding has no body (RFC 9112 §6.3):
        // a POST of a command often comes so (`curl -X POST`, wrk).
        let bodyLength = contentLength ?? 0
        guard hasHost, headEnd + bodyLength + records * recordCost + responseRoom <= poolSize else { return .other }
        guard headEnd + bodyLength <= bytes.count else {
            return headEnd + bodyLength <= limit ? .needMore : .other  // the body is still coming
        }
        return .plain(
            RequestHead(
                method: method, bytes: bytes, path: targetStart..<pathEnd,
                query: pathEnd == targetEnd ? targetEnd..<targetEnd : (pathEnd + 1)..<targetEnd,
                headerLines: (lineEnd + 2)..<start, body: headEnd..<(headEnd + bodyLength),
                length: headEnd + bodyLength))
    }

    var isHead: Bool { method == .head }

    /// The body's bytes (a copy: the peeked bytes are reused for the next request).
    var bodyBytes: [UInt8] { Array(bytes[body]) }

    /// The path as a String (short ones, `/banner`, are stored inline: no allocation).
    var pathText: String { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[path]), as: UTF8.self) }

    var queryText: String { String(decoding: UnsafeRawBufferPointer(rebasing: bytes[query]), as: UTF8.self) }

    /// The first header named `name` (compared ignoring case), its value trimmed.
    func header(_ name: String) -> String? {
        var found: String?
        forEachHeader { headerName, value in
            guard Self.equalsIgnoringCase(headerName, name.utf8) else { return true }
            found = Self.trimmedValue(bytes, value)
            return false
        }
        return found
    }

    /// Every header, in order (for a subscription, which keeps them).
    var headers: [HTTPHeader] {
        var all: [HTTPHeader] = []
        forEachHeader { name, value in
            all.append(HTTPHeader(String(decoding: name, as: UTF8.self), Self.trimmedValue(bytes, value)))
            return true
        }
        return all
    }

    /// Calls `body` with each header line's name and the range of its value (untrimmed), until it
    /// returns false. `parse` checked every line, so each has its CRLF and colon.
    private func forEachHeader(_ body: (_ name: UnsafeRawBufferPointer, _ value: Range<Int>) -> Bool) {
        var start = headerLines.lowerBound
        while start < headerLines.upperBound {
            // Checked already: the first colon ends the name, and no byte needs checking again.
            var colon = start
            while bytes[colon] != UInt8(ascii: ":") { colon += 1 }
            let end = Self.lineEnd(in: bytes, from: colon)!
            guard body(UnsafeRawBufferPointer(rebasing: bytes[start..<colon]), (colon + 1)..<end) else { return }
            start = end + 2
        }
    }

    /// The first query parameter named `name`, as `queryParameters` reads it.
    func queryParameter(_ name: String) -> String? {
        queryParameters(name, name).0
    }

    /// The first query parameters named `first` and `second` (`a=1&b=2`), in one pass; the target
    /// needs no decoding. One without `=` (`?a`, and the empty one of `?&a=1`) has no value: nil,
    /// as libmicrohttpd answers it.
    func queryParameters(_ first: String, _ second: String) -> (String?, String?) {
        // Scanned in place: a read with `?audience=` allocates only the value, when not short.
        var found: (String??, String??) = (nil, nil)  // .some(nil): named, without a value
        var start = query.lowerBound
        while start < query.upperBound && (found.0 == nil || found.1 == nil) {
            var end = start
            while end < query.upperBound && bytes[end] != UInt8(ascii: "&") { end += 1 }
            var equals = start
            while equals < end && bytes[equals] != UInt8(ascii: "=") { equals += 1 }
            let name = UnsafeRawBufferPointer(rebasing: bytes[start..<equals])
            let value = {
                equals < end
                    ? String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(equals + 1)..<end]), as: UTF8.self)
                    : nil
            }
            if found.0 == nil && Self.equals(name, first) { found.0 = .some(value()) }
            if found.1 == nil && Self.equals(name, second) { found.1 = .some(value()) }
            start = end + 1
        }
        return (found.0 ?? nil, found.1 ?? nil)
    }

    // MARK: Bytes

    /// Whether `bytes` are `name`'s: lengths first, then one `memcmp` (a read with `?audience=`
    /// compares two names, and a generic walk of the UTF-8 view cost it a visible share).
    private static func equals(_ bytes: UnsafeRawBufferPointer, _ name: String) -> Bool {
        let utf8 = name.utf8
        guard bytes.count == utf8.count else { return false }
        guard bytes.count > 0 else { return true }
        return utf8.withContiguousStorageIfAvailable { memcmp(bytes.baseAddress!, $0.baseAddress!, bytes.count) == 0 }
            ?? bytes.elementsEqual(utf8)
    }

    /// Whether a header asks for more than a plain read: a body, or a change of protocol.
    private static func asksForMore(_ name: UnsafeRawBufferPointer) -> Bool {
        equalsIgnoringCase(name, "content-length".utf8) || equalsIgnoringCase(name, "transfer-encoding".utf8)
            || equalsIgnoringCase(name, "expect".utf8) || equalsIgnoringCase(name, "upgrade".utf8)
    }

    /// Whether `bytes` starts with `prefix`; nil when too few bytes have come to tell.
    private static func startsWith(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool? {
        let count = min(bytes.count, prefix.utf8CodeUnitCount)
        for index in 0..<count where bytes[index] != prefix.utf8Start[index] { return false }
        return count == prefix.utf8CodeUnitCount ? true : nil
    }

    /// A `Content-Length` value libmicrohttpd and every proxy read alike: spaces or tabs, then 1 to
    /// 5 decimal digits without a leading zero (or `0` alone), then nothing. Anything else
    /// (a sign, a trailing space, `05`, a list) is left to libmicrohttpd and the dispatcher.
    private static func plainLength(_ bytes: UnsafeRawBufferPointer, _ value: Range<Int>) -> Int? {
        var index = value.lowerBound
        while index < value.upperBound && (bytes[index] == 0x20 || bytes[index] == 0x09) { index += 1 }
        let digits = index..<value.upperBound
        guard (1...5).contains(digits.count), bytes[index] != UInt8(ascii: "0") || digits.count == 1 else { return nil }
        var length = 0
        for index in digits {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { return nil }
            length = length * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return length
    }

    private static func matches(_ bytes: UnsafeRawBufferPointer, at start: Int, _ text: StaticString) -> Bool {
        (0..<text.utf8CodeUnitCount).allSatisfy { bytes[start + $0] == text.utf8Start[$0] }
    }

    /// Where the CR of the first CRLF at or after `start` is.
    private static func lineEnd(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        // memchr finds each CR: a head is mostly long lines, and this runs over every byte of each.
        var index = start
        while index + 1 < bytes.count {
            guard let cr = memchr(bytes.baseAddress! + index, 0x0D, bytes.count - 1 - index) else { return nil }
            index = bytes.baseAddress!.distance(to: UnsafeRawPointer(cr))
            if bytes[index + 1] == 0x0A { return index }
            index += 1
        }
        return nil
    }

    /// Whether a LF without its CR has come at or after `start`: libmicrohttpd reads such a head
    /// (RFC 9112 §2.2 lets a server take a bare LF as a line end); waiting here for a CRLF that
    /// never comes would leave the request unanswered until the idle timeout.
    private static func hasBareLineFeed(_ bytes: UnsafeRawBufferPointer, from start: Int) -> Bool {
        var index = start
        while index < bytes.count {
            if bytes[index] == 0x0A && (index == 0 || bytes[index - 1] != 0x0D) { return true }
            index += 1
        }
        return false
    }

    /// The colon of `name: value` when the name is a token and the value visible ASCII, spaces
    /// and tabs (which also refuses an obsolete fold, a line starting with a space).
    private static func headerColon(in bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Int? {
        var colon: Int?
        for index in line {
            let byte = bytes[index]
            if colon == nil {
                if byte == UInt8(ascii: ":") {
                    guard index > line.lowerBound else { return nil }
                    colon = index
                } else if !isTokenByte(byte) {
                    return nil
                }
            } else if !((byte >= 0x20 && byte < 0x7F) || byte == 0x09) {
                return nil
            }
        }
        return colon
    }

    private static func trimmedValue(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        var start = range.lowerBound
        var end = range.upperBound
        while start < end && (bytes[start] == 0x20 || bytes[start] == 0x09) { start += 1 }
        while end > start && (bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09) { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
    }

    /// Visible ASCII other than `%` and `+` (which would need decoding) and `#`.
    private static func isPlainTargetByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "+")
            && byte != UInt8(ascii: "#")
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"),
            UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"),
            UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// `bytes` equals `name`, ASCII letters compared ignoring case (`PreparedResponse` reads its
    /// own headers with it too).
    static func equalsIgnoringCase(_ bytes: some Collection<UInt8>, _ name: String.UTF8View) -> Bool {
        bytes.count == name.count
            && zip(bytes, name).allSatisfy { $0 == $1 || ($0 | 0x20 == $1 | 0x20 && isLetter($1)) }
    }

    /// Whether `bytes` contains `word` (lowercase letters), ignoring case.
    private static func containsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count >= count else { return false }
        return (0...(bytes.count - count)).contains { start in
            (0..<count).allSatisfy { bytes[start + $0] | 0x20 == word.utf8Start[$0] }
        }
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
    }
}
