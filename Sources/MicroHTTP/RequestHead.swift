/// The head of a request read (peeked) by the `Acceptor`, as far as it needs it: enough to tell a
/// subscription to an event stream, which this server holds outside libmicrohttpd, from anything
/// else, which goes to libmicrohttpd untouched (docs/ARCHITECTURE.md, "Event streams outside
/// libmicrohttpd").
///
/// Deliberately narrow: only a plain `GET` over HTTP/1.1 with a target that needs no decoding and
/// no body is ever `.subscription`. Anything unusual (percent-encoding, folded or odd header
/// lines, a body) is `.other`, so libmicrohttpd and the dispatcher answer it exactly as before.
struct RequestHead {
    let path: String
    let query: String
    let headers: [HTTPHeader]
    /// Bytes from the request's first byte to the end of the blank line after the headers.
    let length: Int

    enum Sorting {
        /// Not enough bytes yet to tell.
        case needMore
        /// Not a subscription: libmicrohttpd answers it.
        case other
        case subscription(RequestHead)
    }

    /// Sorts the bytes received so far. `isStreamPath` says whether a path may answer with a
    /// stream; `limit` is how many bytes a head may take before it is left to libmicrohttpd.
    static func sort(_ bytes: UnsafeRawBufferPointer, limit: Int, isStreamPath: (Substring) -> Bool) -> Sorting {
        let prefix = Array("GET /".utf8)
        for (index, byte) in prefix.enumerated() where index < bytes.count {
            if bytes[index] != byte { return .other }
        }
        guard let lineEnd = find(crlf, in: bytes, from: 0) else {
            return bytes.count < limit ? .needMore : .other
        }
        let line = bytes[0..<lineEnd]
        guard line.count > 14, line.suffix(9).elementsEqual(" HTTP/1.1".utf8) else { return .other }
        let target = line.dropFirst(4).dropLast(9)
        guard target.allSatisfy(isPlainTargetByte) else { return .other }
        let targetText = String(decoding: target, as: UTF8.self)
        let parts = targetText.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        guard isStreamPath(parts[0]) else { return .other }
        guard let headEnd = find(crlf + crlf, in: bytes, from: lineEnd) else {
            return bytes.count < limit ? .needMore : .other
        }
        var headers: [HTTPHeader] = []
        var start = lineEnd + 2
        while start < headEnd + 2 {
            let end = find(crlf, in: bytes, from: start)!
            guard let header = header(in: bytes[start..<end]) else { return .other }
            headers.append(header)
            start = end + 2
        }
        let framing = headers.contains { header in
            let name = header.name.lowercased()
            return name == "content-length" || name == "transfer-encoding"
        }
        // A body, or no Host: libmicrohttpd and the dispatcher refuse or read it as they always have.
        guard !framing, headers.contains(where: { $0.name.lowercased() == "host" }) else { return .other }
        return .subscription(
            RequestHead(
                path: String(parts[0]), query: parts.count == 2 ? String(parts[1]) : "", headers: headers,
                length: headEnd + 4))
    }

    private static let crlf = Array("\r\n".utf8)

    /// Visible ASCII other than `%` and `+` (which would need decoding) and `#`.
    private static func isPlainTargetByte(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "+")
            && byte != UInt8(ascii: "#")
    }

    /// `name: value`, the name a token, the value visible ASCII, spaces and tabs; nil otherwise.
    private static func header(in line: Slice<UnsafeRawBufferPointer>) -> HTTPHeader? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else { return nil }
        let name = line[line.startIndex..<colon]
        let value = line[(colon + 1)...]
        guard name.allSatisfy(isTokenByte),
            value.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 })
        else { return nil }
        let trimmed = value.drop { $0 == 0x20 || $0 == 0x09 }
        var text = String(decoding: trimmed, as: UTF8.self)
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return HTTPHeader(String(decoding: name, as: UTF8.self), text)
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            Array("!#$&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        for index in start...(bytes.count - needle.count) where bytes[index] == needle[0] {
            if (1..<needle.count).allSatisfy({ bytes[index + $0] == needle[$0] }) { return index }
        }
        return nil
    }
}
