import Glibc
import Threading

/// UUIDs as text (RFC 9562 layout, lowercase): random ones for request and event ids, and ones a
/// name always gives, for events several processes may each make (docs/WEBHOOKS.md).
public enum UUIDText {
    /// 128 random bits as a version 4 UUID.
    public static func random() -> String {
        formatted(randomBytes.withLock { $0.take(16) }, version: 4)
    }

    /// The kernel's random bytes, drawn 4 KiB at a time: a command makes a request id, thousands
    /// a second, and each draw is a `getrandom` system call (docs/PERFORMANCE.md, "What a command
    /// costs").
    private static let randomBytes = Lock(RandomBytes())

    private struct RandomBytes {
        private var bytes = [UInt8](repeating: 0, count: 4096)
        private var used = 4096

        mutating func take(_ count: Int) -> [UInt8] {
            if used + count > bytes.count {
                bytes.withUnsafeMutableBytes { buffer in
                    // getentropy(3) (getrandom(2) within) gives 256 bytes a call, never blocking or
                    // failing once the kernel's pool is ready; the standard generator where it fails.
                    for start in stride(from: 0, to: buffer.count, by: 256) {
                        let chunk = UnsafeMutableRawBufferPointer(
                            rebasing: buffer[start..<min(start + 256, buffer.count)])
                        if getentropy(chunk.baseAddress, chunk.count) != 0 {
                            var generator = SystemRandomNumberGenerator()
                            for index in chunk.indices { chunk[index] = generator.next() }
                        }
                    }
                }
                used = 0
            }
            defer { used += count }
            return Array(bytes[used..<used + count])
        }
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
