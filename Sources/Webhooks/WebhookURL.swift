#if canImport(Glibc)
    import Glibc
#endif

/// A webhook's URL (docs/WEBHOOKS.md), read by hand so that what is checked is what is connected
/// to: `http` or `https`, a host (a name, an IPv4 address, or an IPv6 address in brackets), a port
/// (80 or 443 unless given) and the request target (path and query, `/` when none). No user or
/// password (a URL is listed to every admin) and no fragment (never sent). Printable ASCII, at
/// most 2048 bytes: a name in another script is given in its `xn--` form.
public struct WebhookURL: Sendable, Hashable, CustomStringConvertible {
    public static let maxBytes = 2048

    public let secure: Bool
    /// Lower case; an IPv6 address without its brackets, in its shortest form (RFC 5952).
    public let host: String
    public let port: UInt16
    /// What the request line asks for: the path and the query.
    public let target: String
    /// As given.
    public let description: String

    /// Whether `host` is an IPv6 address (written in brackets in the URL and the Host header).
    public var hostIsIPv6: Bool { host.utf8.contains(UInt8(ascii: ":")) }

    /// `text` read, or why it is not a webhook URL (a sentence for the `url` field's problem).
    public init(_ text: String) throws(WebhookURLError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maxBytes else {
            throw WebhookURLError("is longer than \(Self.maxBytes) bytes")
        }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw WebhookURLError("has a space, a control character or a non-ASCII one; percent-encode them")
        }
        let lowered = String(decoding: bytes.prefix(8), as: UTF8.self).lowercased()
        let rest: ArraySlice<UInt8>
        if lowered.hasPrefix("https://") {
            secure = true
            rest = bytes[8...]
        } else if lowered.hasPrefix("http://") {
            secure = false
            rest = bytes[7...]
        } else {
            throw WebhookURLError("is not an http:// or https:// URL")
        }
        guard !rest.contains(UInt8(ascii: "#")) else {
            throw WebhookURLError("has a fragment (#…), which is never sent; leave it out")
        }
        let authority = rest.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") }
        guard !authority.contains(UInt8(ascii: "@")) else {
            throw WebhookURLError("names a user or password; put credentials in the path or rely on the signature")
        }
        let portText: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw WebhookURLError("has an IPv6 address without its closing ]")
            }
            let address = String(decoding: authority[(authority.startIndex + 1)..<close], as: UTF8.self).lowercased()
            guard let parsed = IPAddress(parsing: address), parsed.isIPv6 else {
                throw WebhookURLError("has '\(address)' in brackets, which is not an IPv6 address")
            }
            // In its shortest form, as libcurl reads it too (`[6::0]` is `[6::]`): one address,
            // one way of listing it.
            host = parsed.description
            let after = authority[(close + 1)...]
            guard after.isEmpty || after.first == UInt8(ascii: ":") else {
                throw WebhookURLError("has characters after the IPv6 address's ]")
            }
            portText = after.isEmpty ? nil : after.dropFirst()
        } else {
            let name = authority.prefix { $0 != UInt8(ascii: ":") }
            let isNameByte = { (byte: UInt8) in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                    || byte == UInt8(ascii: ".")
            }
            guard (1...253).contains(name.count), name.allSatisfy(isNameByte) else {
                throw WebhookURLError(
                    "has no host name, or one with characters other than letters, digits, '-' and '.'")
            }
            host = String(decoding: name, as: UTF8.self).lowercased()
            if let address = Self.ipv4(writtenOtherwiseAs: host) {
                throw WebhookURLError("writes the IPv4 address \(address) as '\(host)'; write it as \(address)")
            }
            portText = name.count < authority.count ? authority[(name.endIndex + 1)...] : nil
        }
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ (0x30...0x39).contains($0) }),
                let port = UInt16(String(decoding: portText, as: UTF8.self)), port > 0
            else {
                throw WebhookURLError("has a port that is not a number from 1 to 65535")
            }
            self.port = port
        } else {
            port = secure ? 443 : 80
        }
        let remainder = rest[authority.endIndex...]
        target =
            remainder.first == UInt8(ascii: "/")
            ? String(decoding: remainder, as: UTF8.self) : "/" + String(decoding: remainder, as: UTF8.self)
        description = text
    }
}

extension WebhookURL {
    /// The IPv4 address `host` spells in one of the old notations (`0x7f.1`, `127.1`,
    /// `2130706433`, octal `0177.0.0.1`), which libcurl — as browsers do — connects to as that
    /// address rather than looking the name up; nil for a name, or an address written a.b.c.d.
    /// Found against libcurl (`CurlURLOracleTests`): such a host was taken as a name, so the address
    /// checked was not the one connected to.
    static func ipv4(writtenOtherwiseAs host: String) -> String? {
        var address = in_addr()
        guard inet_aton(host, &address) != 0,
            let dotted = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) })?.description
        else { return nil }
        return dotted == host ? nil : dotted
    }
}

/// Why a text is not a webhook URL: a sentence that follows the URL ("… is not an http:// or
/// https:// URL").
public struct WebhookURLError: Error, Sendable, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
}
