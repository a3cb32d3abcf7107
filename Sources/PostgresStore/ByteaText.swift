/// bytea's hexadecimal text form (`\\x0a1b…`, PostgreSQL's `bytea_output = hex`, the default
/// since 9.0): how bytes travel over libpq's text protocol.
enum ByteaText {
    private static let digits = Array("0123456789abcdef".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var text = [UInt8](repeating: 0, count: 2 + 2 * bytes.count)
        text[0] = UInt8(ascii: "\\")
        text[1] = UInt8(ascii: "x")
        for (index, byte) in bytes.enumerated() {
            text[2 + 2 * index] = digits[Int(byte >> 4)]
            text[3 + 2 * index] = digits[Int(byte & 0x0F)]
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Nil when `text` is not in the hexadecimal form.
    static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count >= 2, utf8[0] == UInt8(ascii: "\\"), utf8[1] == UInt8(ascii: "x"), utf8.count % 2 == 0 else {
            return nil
        }
        var bytes = [UInt8](repeating: 0, count: (utf8.count - 2) / 2)
        for index in bytes.indices {
            guard let high = value(utf8[2 + 2 * index]), let low = value(utf8[3 + 2 * index]) else { return nil }
            bytes[index] = high << 4 | low
        }
        return bytes
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
