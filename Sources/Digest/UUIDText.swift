/// UUIDs as text (RFC 9562 layout, lowercase): random ones for request and event ids, and ones a
/// name always gives, for events several processes may each make (docs/WEBHOOKS.md).
public enum UUIDText {
    /// 128 random bits as a version 4 UUID.
    public static func random() -> String {
        // Two draws, not sixteen: each is a `getrandom` system call (docs/PERFORMANCE.md, "What a
        // command costs").
        var generator = SystemRandomNumberGenerator()
        let halves = [generator.next() as UInt64, generator.next()]
        return formatted(halves.withUnsafeBytes { Array($0) }, version: 4)
    }

    /// The UUID `name` always gives: version 5's layout, with SHA-256 in place of SHA-1.
    public static func named(_ name: String) -> String {
        var hash = SHA256()
        Array(name.utf8).withUnsafeBytes { hash.update($0) }
        return formatted(hash.finish(), version: 5)
    }

    /// The first 16 of `bytes`, their version and variant bits set: `xxxxxxxx-xxxx-Vxxx-yxxx-xxxxxxxxxxxx`.
    static func formatted(_ bytes: [UInt8], version: UInt8) -> String {
        var bytes = Array(bytes.prefix(16))
        bytes[6] = bytes[6] & 0x0F | version << 4
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array(bytes.withUnsafeBytes { SHA256.hexDigits($0) }.utf8)
        var text = [UInt8]()
        text.reserveCapacity(36)
        for (index, digit) in hex.enumerated() {
            if index == 8 || index == 12 || index == 16 || index == 20 { text.append(UInt8(ascii: "-")) }
            text.append(digit)
        }
        return String(decoding: text, as: UTF8.self)
    }
}
