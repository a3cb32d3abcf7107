/// Reads one shape straight from the bytes, without building the general tree:
/// `{"<key>": [{"<name>": <string or integer>, …}, …]}`, the shape of a screen's receipts, which
/// come thousands of times a second (docs/ARCHITECTURE.md, "JSON: what the parser takes").
///
/// It takes a strict subset of what `JSONParser` takes and reads it the same: whitespace between
/// tokens; strings of printable ASCII without escapes; integers without fraction or exponent that
/// fit an `Int`; each object's names among `names`, each at most once. Anything else (another
/// shape, an escape, a non-ASCII byte, a fraction, `null`, a duplicate or unknown name) is nil:
/// the caller then reads the body with `JSONParser`, which takes it or says what is wrong in its
/// own words. `FuzzJSON` holds the two to the same values.
public enum FlatRecords {
    public enum Scalar: Equatable, Sendable {
        case string(String)
        case integer(Int)
    }

    /// The records of `bytes`, each with a value (or nil, absent) for every one of `names`, in
    /// their order; nil when `bytes` is not in the shape.
    public static func read(_ bytes: [UInt8], key: String, names: [String]) -> [[Scalar?]]? {
        bytes.withUnsafeBufferPointer { buffer in
            var reader = Reader(bytes: buffer, names: names.map { Array($0.utf8) })
            return reader.document(key: Array(key.utf8))
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        let names: [[UInt8]]
        var position = 0

        mutating func document(key: [UInt8]) -> [[Scalar?]]? {
            guard take(UInt8(ascii: "{")), let name = string(), name.elementsEqual(key), take(UInt8(ascii: ":")),
                take(UInt8(ascii: "["))
            else { return nil }
            var records: [[Scalar?]] = []
            if !take(UInt8(ascii: "]")) {
                repeat {
                    guard let record = record() else { return nil }
                    records.append(record)
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "]")) else { return nil }
            }
            guard take(UInt8(ascii: "}")) else { return nil }
            skipWhitespace()
            return position == bytes.count ? records : nil
        }

        private mutating func record() -> [Scalar?]? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var values = [Scalar?](repeating: nil, count: names.count)
            if take(UInt8(ascii: "}")) { return values }
            repeat {
                guard let name = string(), let index = names.firstIndex(where: { $0.elementsEqual(name) }),
                    values[index] == nil, take(UInt8(ascii: ":")), let value = scalar()
                else { return nil }
                values[index] = value
            } while take(UInt8(ascii: ","))
            return take(UInt8(ascii: "}")) ? values : nil
        }

        private mutating func scalar() -> Scalar? {
            skipWhitespace()
            guard position < bytes.count else { return nil }
            if bytes[position] == UInt8(ascii: "\"") {
                return string().map { .string(String(decoding: $0, as: UTF8.self)) }
            }
            return integer().map(Scalar.integer)
        }

        /// `-?(0|[1-9][0-9]*)`, at most 18 digits (any such fits an `Int`), not followed by a
        /// fraction or an exponent.
        private mutating func integer() -> Int? {
            var negative = false
            if position < bytes.count, bytes[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            let start = position
            var value = 0
            while position < bytes.count, bytes[position] >= UInt8(ascii: "0"), bytes[position] <= UInt8(ascii: "9") {
                // Counted before the digit is taken: a nineteenth could overflow (FuzzJSON found it).
                if position - start == 18 { return nil }
                value = value * 10 + Int(bytes[position] - UInt8(ascii: "0"))
                position += 1
            }
            let digits = position - start
            guard digits > 0, digits == 1 || bytes[start] != UInt8(ascii: "0") else { return nil }
            if position < bytes.count,
                [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[position])
            {
                return nil
            }
            return negative ? -value : value
        }

        /// A string's bytes, between its quotes: printable ASCII, no backslash.
        private mutating func string() -> UnsafeBufferPointer<UInt8>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = position
            while position < bytes.count {
                let byte = bytes[position]
                if byte == UInt8(ascii: "\"") {
                    position += 1
                    return UnsafeBufferPointer(rebasing: bytes[start..<(position - 1)])
                }
                guard byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") else { return nil }
                position += 1
            }
            return nil
        }

        /// Whitespace, then `byte` if it is next (taken: true).
        private mutating func take(_ byte: UInt8) -> Bool {
            skipWhitespace()
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }

        private mutating func skipWhitespace() {
            while position < bytes.count,
                bytes[position] == 0x20 || bytes[position] == 0x09 || bytes[position] == 0x0A || bytes[position] == 0x0D
            {
                position += 1
            }
        }
    }
}
