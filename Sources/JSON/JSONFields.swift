/// A field of a JSON document that is missing, unknown or of the wrong type or value.
public struct FieldError: Error, Hashable {
    /// The field's path, as an operator would write it: `banners[2].image`.
    public let field: String
    public let message: String

    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}

/// Typed, path-aware access to the members of one JSON object, so that every error names the
/// field it is about. Used for the configuration file and for request bodies.
public struct JSONFields: Sendable {
    public let path: String
    private let members: [String: JSONValue]

    /// - Parameter path: the object's own path ("" for the document, `banners[2]` for an element).
    public init(_ value: JSONValue, path: String = "") throws(FieldError) {
        guard case .object(let members) = value else {
            throw FieldError(
                field: path.isEmpty ? "(document)" : path,
                message: "must be a JSON object, got \(value.kindDescription)")
        }
        self.path = path
        self.members = members
    }

    public func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    /// The member named `key`, as it is.
    public subscript(key: String) -> JSONValue? { members[key] }

    /// Refuses fields this object does not define (a typo must not be silently ignored).
    public func rejectUnknown(allowing known: [String]) throws(FieldError) {
        guard let unknown = members.keys.filter({ !known.contains($0) }).sorted().first else { return }
        let expected =
            known.isEmpty ? "this object takes no fields" : "expected one of: \(known.joined(separator: ", "))"
        throw FieldError(field: fieldPath(unknown), message: "unknown field; \(expected)")
    }

    /// The field converted by `kind`; nil when absent. Present with another type is an error.
    public func optional<Value>(_ key: String, _ kind: JSONKind<Value>) throws(FieldError) -> Value? {
        guard let value = members[key] else { return nil }
        return try kind.read(value, at: fieldPath(key))
    }

    public func required<Value>(_ key: String, _ kind: JSONKind<Value>) throws(FieldError) -> Value {
        guard let value = try optional(key, kind) else {
            throw FieldError(field: fieldPath(key), message: "required field is missing; must be \(kind.name)")
        }
        return value
    }
}

/// A JSON type a field must have, with its name for error messages.
public struct JSONKind<Value> {
    public let name: String
    public let convert: (JSONValue) -> Value?

    public static var string: JSONKind<String> {
        JSONKind<String>(name: "a string") { if case .string(let s) = $0 { s } else { nil } }
    }
    public static var bool: JSONKind<Bool> {
        JSONKind<Bool>(name: "true or false") { if case .bool(let b) = $0 { b } else { nil } }
    }
    public static var number: JSONKind<JSONNumber> {
        JSONKind<JSONNumber>(name: "a number") { if case .number(let n) = $0 { n } else { nil } }
    }
    /// A number written without fraction or exponent (its value may still be out of Int range).
    public static var integer: JSONKind<JSONNumber> {
        JSONKind<JSONNumber>(name: "an integer") { if case .number(let n) = $0, n.isIntegerLiteral { n } else { nil } }
    }
    /// A number with an integral value, however written (`2`, `2.0`, `2e0`), as JSON Schema's
    /// `integer` counts it.
    public static var integralNumber: JSONKind<JSONNumber> {
        JSONKind<JSONNumber>(name: "an integer") { if case .number(let n) = $0, n.isIntegral { n } else { nil } }
    }
    public static var array: JSONKind<[JSONValue]> {
        JSONKind<[JSONValue]>(name: "an array") { if case .array(let a) = $0 { a } else { nil } }
    }

    /// `value` converted, or the error for the field at `path` (`must be a string, got a number`).
    public func read(_ value: JSONValue, at path: String) throws(FieldError) -> Value {
        guard let converted = convert(value) else {
            throw FieldError(field: path, message: "must be \(name), got \(value.kindDescription)")
        }
        return converted
    }

    /// This kind, or null (given as `.some(nil)`, distinct from an absent field).
    public var orNull: JSONKind<Value?> {
        JSONKind<Value?>(name: "\(name) or null") { value in
            if case .null = value { return .some(nil) }
            return convert(value).map { .some($0) }
        }
    }
}
