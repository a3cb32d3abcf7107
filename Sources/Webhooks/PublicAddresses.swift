#if canImport(Glibc)
    import Glibc
#endif

/// An IPv4 or IPv6 address, as bytes in network order.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    public var isIPv6: Bool { bytes.count == 16 }

    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A numeric address in its text form (`192.0.2.1`, `2001:db8::1`); nil for anything else.
    public init?(parsing text: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        guard inet_pton(AF_INET6, text, &v6) == 1 else { return nil }
        bytes = withUnsafeBytes(of: &v6) { Array($0) }
    }

    public var description: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        return bytes.withUnsafeBytes { raw in
            guard inet_ntop(isIPv6 ? AF_INET6 : AF_INET, raw.baseAddress, &text, socklen_t(text.count)) != nil
            else { return "?" }
            let length = text.firstIndex(of: 0) ?? text.count
            return String(decoding: text[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// Why a webhook may not be sent to this address unless private ones are allowed (loopback,
    /// a private or shared range, link-local, multicast, reserved…); nil for a public address.
    /// An IPv6 address that carries an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 one.
    public var notPublic: String? {
        isIPv6 ? Self.notPublic(ipv6: bytes) : Self.notPublic(ipv4: bytes)
    }

    private static func notPublic(ipv4 b: [UInt8]) -> String? {
        switch (b[0], b[1]) {
        case (0, _): "in 0.0.0.0/8 (this network)"
        case (10, _): "private (10.0.0.0/8)"
        case (100, 64...127): "shared carrier-grade NAT space (100.64.0.0/10)"
        case (127, _): "loopback (127.0.0.0/8)"
        case (169, 254): "link-local (169.254.0.0/16), where cloud metadata services answer"
        case (172, 16...31): "private (172.16.0.0/12)"
        case (192, 0) where b[2] == 0: "reserved for protocol assignments (192.0.0.0/24)"
        case (192, 0) where b[2] == 2: "reserved for documentation (192.0.2.0/24)"
        case (192, 88) where b[2] == 99: "the deprecated 6to4 relay anycast (192.88.99.0/24)"
        case (192, 168): "private (192.168.0.0/16)"
        case (198, 18...19): "reserved for benchmarks (198.18.0.0/15)"
        case (198, 51) where b[2] == 100: "reserved for documentation (198.51.100.0/24)"
        case (203, 0) where b[2] == 113: "reserved for documentation (203.0.113.0/24)"
        case (224...239, _): "multicast (224.0.0.0/4)"
        case (240...255, _): "reserved (240.0.0.0/4)"
        default: nil
        }
    }

    private static func notPublic(ipv6 b: [UInt8]) -> String? {
        let prefix = { (count: Int, pattern: [UInt8]) in Array(b.prefix(count)) == pattern }
        if b.allSatisfy({ $0 == 0 }) { return "unspecified (::)" }
        if prefix(15, [UInt8](repeating: 0, count: 15)) && b[15] == 1 { return "loopback (::1)" }
        if prefix(10, [UInt8](repeating: 0, count: 10)) && b[10] == 0xFF && b[11] == 0xFF {
            return Self.notPublic(ipv4: Array(b[12...])).map { "an IPv4-mapped address, \($0)" }
        }
        if prefix(12, [UInt8](repeating: 0, count: 12)) { return "IPv4-compatible (::/96, deprecated)" }
        if prefix(12, [0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0]) {
            return "IPv4-translated (::ffff:0:0/96), which the internet does not route"
        }
        if prefix(12, [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0]) {
            return Self.notPublic(ipv4: Array(b[12...])).map { "a NAT64 address, \($0)" }
        }
        // The rest of the IETF's special-purpose registry that the internet does not route: a
        // translator of the local network (RFC 8215), Teredo and the other protocol assignments,
        // the discard prefix (RFC 6666), the second documentation prefix (RFC 9637).
        if prefix(6, [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01]) { return "local-use NAT64 (64:ff9b:1::/48)" }
        if prefix(2, [0x20, 0x01]) && b[2] & 0xFE == 0 {
            return "reserved for protocol assignments (2001::/23, Teredo's 2001::/32 included)"
        }
        if prefix(8, [0x01, 0, 0, 0, 0, 0, 0, 0]) { return "discard-only (100::/64)" }
        if prefix(2, [0x3F, 0xFF]) && b[2] & 0xF0 == 0 { return "reserved for documentation (3fff::/20)" }
        if prefix(2, [0x20, 0x02]) {
            return Self.notPublic(ipv4: Array(b[2..<6])).map { "a 6to4 address, \($0)" }
        }
        if b[0] & 0xFE == 0xFC { return "unique local (fc00::/7)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local (fe80::/10)" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "site-local (fec0::/10, deprecated)" }
        if b[0] == 0xFF { return "multicast (ff00::/8)" }
        if prefix(4, [0x20, 0x01, 0x0D, 0xB8]) { return "reserved for documentation (2001:db8::/32)" }
        return nil
    }
}

/// Where a webhook's URL leads (docs/WEBHOOKS.md, "Only public addresses"): its host resolved,
/// and every address it resolves to checked, so that a name cannot lead to the service's own
/// network. A delivery connects to an address checked here, never to the name again.
public enum WebhookAddresses {
    /// The addresses of `url`'s host, each checked unless `allowPrivate`; throws why not (a
    /// sentence for the `url` field). Blocks while the name is resolved.
    public static func resolve(_ url: WebhookURL, allowPrivate: Bool) throws(WebhookURLError) -> [IPAddress] {
        let addresses: [IPAddress]
        if let literal = IPAddress(parsing: url.host) {
            addresses = [literal]
        } else {
            addresses = try lookUp(url.host)
        }
        guard !allowPrivate else { return addresses }
        for address in addresses {
            if let reason = address.notPublic {
                let via = address.description == url.host ? "" : " resolves to \(address), which"
                throw WebhookURLError(
                    "leads to a non-public address: \(url.host)\(via) is \(reason); webhooks reach public addresses "
                        + "only unless webhookAllowPrivate (CAROUSEL_WEBHOOK_ALLOW_PRIVATE) is true")
            }
        }
        return addresses
    }

    private static func lookUp(_ host: String) throws(WebhookURLError) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            throw WebhookURLError(
                "has a host, \(host), that cannot be resolved (\(String(cString: gai_strerror(status))))")
        }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let socketAddress = current.pointee.ai_addr {
                switch current.pointee.ai_family {
                case AF_INET:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                        $0.pointee.sin_addr
                    }
                    addresses.append(IPAddress(bytes: withUnsafeBytes(of: address) { Array($0) })!)
                case AF_INET6:
                    let address = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                        $0.pointee.sin6_addr
                    }
                    addresses.append(IPAddress(bytes: withUnsafeBytes(of: address) { Array($0) })!)
                default: break
                }
            }
            entry = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw WebhookURLError("has a host, \(host), with no IPv4 or IPv6 address")
        }
        var seen = Set<IPAddress>()
        return addresses.filter { seen.insert($0).inserted }
    }
}
