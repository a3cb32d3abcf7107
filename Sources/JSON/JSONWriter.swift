/// A value that can write itself as JSON text.
public protocol JSONWritable {
    func writeJSON(to output: inout [UInt8])
}

/// A JSON object written field by field, in the order given (the API's documented order).
public struct JSONObject: JSONWritable, Sendable {
    private var fields: [UInt8] = []

    public init() {}

    /// An object whose fields will take about `bytes` bytes: one allocation, where growing by
    /// doubling takes several (a state's answer, about 2 KB, is made for every command).
    public init(reservingCapacity bytes: Int) {
        fields.reserveCapacity(bytes)
    }

    public mutating func add(_ name: String, _ value: some JSONWritable) {
        if !fields.isEmpty { fields.append(UInt8(ascii: ",")) }
        name.writeJSON(to: &fields)
        fields.append(UInt8(ascii: ":"))
        value.writeJSON(to: &fields)
    }

    public func writeJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "{"))
        output.append(contentsOf: fields)
        output.append(UInt8(ascii: "}"))
    }

    /// The object as UTF-8 JSON text.
    public var bytes: [UInt8] { text(endingWith: nil) }

    /// The object as UTF-8 JSON text and a line feed, as the API's bodies end.
    public var line: [UInt8] { text(endingWith: UInt8(ascii: "\n")) }

    /// The text, and `end` after it, in one buffer of the size they take.
    private func text(endingWith end: UInt8?) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(fields.count + 3)
        writeJSON(to: &output)
        if let end { output.append(end) }
        return output
    }
}

/// JSON text encoded earlier, written as it is.
public struct EncodedJSON: JSONWritable, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    public func writeJSON(to output: inout [UInt8]) {
        output.append(contentsOf: bytes)
    }
}

extension String: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Over the contiguous bytes a native string has: the generic view walks index by index.
        let plain = utf8.withContiguousStorageIfAvailable { bytes in
            guard !bytes.contains(where: Self.needsEscape) else { return false }
            output.append(contentsOf: bytes)  // the common case: one copy
            return true
        }
        if plain != true {
            for byte in utf8 { Self.writeEscaped(byte, to: &output) }
        }
        output.append(UInt8(ascii: "\""))
    }

    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    private static func writeEscaped(_ byte: UInt8, to output: inout [UInt8]) {
        let escaped: UInt8? =
            switch byte {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case UInt8(ascii: "\n"): UInt8(ascii: "n")
            case UInt8(ascii: "\r"): UInt8(ascii: "r")
            case UInt8(ascii: "\t"): UInt8(ascii: "t")
            default: nil
            }
        if let escaped {
            output.append(UInt8(ascii: "\\"))
            output.append(escaped)
        } else if byte < 0x20 {
            let hex = Array("0123456789abcdef".utf8)
            output.append(contentsOf: Array("\\u00".utf8))
            output.append(hex[Int(byte >> 4)])
            output.append(hex[Int(byte & 0xF)])
        } else {
            output.append(byte)
        }
    }
}

extension Int: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: String(self).utf8) }
}

extension Int64: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: String(self).utf8) }
}

extension UInt64: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: String(self).utf8) }
}

extension Double: JSONWritable {
    /// Swift's shortest round-trip form (`4.0`, `0.25`); the API never holds NaN or infinity.
    public func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: description.utf8) }
}

extension Bool: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) { output.append(contentsOf: (self ? "true" : "false").utf8) }
}

extension Optional: JSONWritable where Wrapped: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) {
        switch self {
        case .some(let value): value.writeJSON(to: &output)
        case .none: output.append(contentsOf: "null".utf8)
        }
    }
}

extension Array: JSONWritable where Element: JSONWritable {
    public func writeJSON(to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for index in indices {
            if index > startIndex { output.append(UInt8(ascii: ",")) }
            self[index].writeJSON(to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }
}
