/// A request's query string (after the `?`), read as libmicrohttpd 0.9.75 reads one
/// (`MHD_parse_arguments_`): parameters split at each `&`, a name split from its value at the first
/// `=`, and each part decoded, `+` as a space and then `%XX` as the byte (a `%` not followed by two
/// hex digits stays as it is). A parameter without `=` (`?a`, and the empty one of `?&a=1`) has no
/// value: nil. A `&` at the very end starts no parameter.
///
/// Why the server reads it rather than libmicrohttpd (docs/ARCHITECTURE.md, "Query strings"):
/// libmicrohttpd keeps a 64-byte record per parameter in the connection's memory pool, and 0.9.75
/// never answers a request whose parameters outgrow it (about 230 in 16 KiB, from a request of
/// 1.5 KB): it queues its 431, then overwrites the connection's state, which then waits for the
/// timeout. So `HTTPServer` takes the query off the target before libmicrohttpd parses it, and
/// `Request` reads it here.
struct QueryString: Sendable {
    let bytes: [UInt8]

    /// The values of the first parameters named exactly `first` and `second` (after decoding), in
    /// one pass.
    func values(_ first: String, _ second: String) -> (String?, String?) {
        var found: (String??, String??) = (nil, nil)  // .some(nil): named, without a value
        forEachParameter { name, value in
            if found.0 == nil && name == first { found.0 = .some(value) }
            if found.1 == nil && name == second { found.1 = .some(value) }
            return found.0 == nil || found.1 == nil
        }
        return (found.0 ?? nil, found.1 ?? nil)
    }

    /// Every parameter, in order.
    var parameters: [(name: String, value: String?)] {
        var all: [(name: String, value: String?)] = []
        forEachParameter { name, value in
            all.append((name, value))
            return true
        }
        return all
    }

    /// Calls `body` with each parameter, decoded, until it returns false.
    private func forEachParameter(_ body: (_ name: String, _ value: String?) -> Bool) {
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "&")) ?? bytes.count
            let segment = bytes[start..<end]
            let parameter =
                if let equals = segment.firstIndex(of: UInt8(ascii: "=")) {
                    (Self.decoded(segment[..<equals]), Self.decoded(segment[(equals + 1)...]) as String?)
                } else {
                    (Self.decoded(segment), nil as String?)
                }
            guard body(parameter.0, parameter.1) else { return }
            start = end + 1
        }
    }

    /// `part` with `+` read as a space, then each `%` and two hex digits as that byte; invalid UTF-8
    /// replaced, as libmicrohttpd's C strings were read before.
    static func decoded(_ part: ArraySlice<UInt8>) -> String {
        guard part.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) else {
            return String(decoding: part, as: UTF8.self)
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(part.count)
        var index = part.startIndex
        while index < part.endIndex {
            let byte = part[index]
            if byte == UInt8(ascii: "%"), part.endIndex - index > 2,
                let high = hexValue(part[index + 1]), let low = hexValue(part[index + 2])
            {
                decoded.append(high << 4 | low)
                index += 3
            } else {
                decoded.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        return String(decoding: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
