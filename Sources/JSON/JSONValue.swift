/// A parsed JSON document. Numbers keep their literal, so an integer field can tell `2` from
/// `2.5` and report `1e400` as out of range rather than as infinity.
public enum JSONValue: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(JSONNumber)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// How error messages name the kind of value found ("got a string").
    public var kindDescription: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .number: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// A JSON number as written in the document.
public struct JSONNumber: Hashable, Sendable {
    public let literal: String

    public init(literal: String) {
        self.literal = literal
    }

    /// The nearest Double (infinite when the literal is beyond Double's range).
    public var double: Double { Double(literal) ?? .nan }

    /// True for literals without fraction or exponent (`12`, `-3`).
    public var isIntegerLiteral: Bool { !literal.contains { $0 == "." || $0 == "e" || $0 == "E" } }

    /// The value as an Int when it is an integer literal that fits.
    public var integer: Int? { isIntegerLiteral ? Int(literal) : nil }

    /// True when the value is a whole number, whatever the notation (`2.0`, `-3e2`).
    public var isIntegral: Bool {
        if isIntegerLiteral { return true }
        let value = double
        return value.isFinite && value.rounded(.towardZero) == value
    }

    /// The value as an Int when it is a whole number that fits (`2.0` → 2; `1e300` → nil).
    public var integralValue: Int? {
        if let integer { return integer }
        let value = double
        guard isIntegral, value >= -9.2e18, value <= 9.2e18 else { return nil }
        return Int(value)
    }
}
