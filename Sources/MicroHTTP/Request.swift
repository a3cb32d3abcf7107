/// One request header as the client sent it.
public struct HTTPHeader: Sendable, Equatable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A complete HTTP request: line, headers and the whole (size-capped) body.
public struct Request: Sendable {
    public var method: String
    /// The path without the query string, as sent (`/banner/next`).
    public var path: String
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(method: String, path: String, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }

    /// The first header with this name; names compare case-insensitively, as HTTP says.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.utf8.elementsEqual(name.utf8, by: asciiCaseInsensitiveEqual) }?.value
    }
}

private func asciiCaseInsensitiveEqual(_ a: UInt8, _ b: UInt8) -> Bool {
    a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
}
