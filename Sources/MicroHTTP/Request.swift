import CMicroHTTPD

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
///
/// Noncopyable, and handed to handlers `borrowing`: headers are read straight from
/// libmicrohttpd's connection while the handler runs, so the read path copies none of them,
/// and the compiler stops a handler from keeping the request beyond its call (deferred work
/// takes the values it needs instead).
public struct Request: ~Copyable {
    public let method: String
    /// The path without the query string, as sent (`/banner/next`).
    public let path: String
    public let body: [UInt8]
    private let headers: Headers

    private enum Headers {
        /// Valid for the duration of the handler call that receives the request.
        case connection(OpaquePointer)
        case list([HTTPHeader])
    }

    /// A request built from values (for tests, or for handlers called without a server).
    public init(method: String, path: String, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.body = body
        self.headers = .list(headers)
    }

    init(method: String, path: String, body: [UInt8], connection: OpaquePointer) {
        self.method = method
        self.path = path
        self.body = body
        self.headers = .connection(connection)
    }

    /// The first header with this name; names compare case-insensitively, as HTTP says.
    public func header(_ name: String) -> String? {
        switch headers {
        case .connection(let connection):
            // withCString copies a short name to the stack; passing `name` as the argument
            // would convert it through a heap array on every read.
            name.withCString { MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, $0) }
                .map { String(cString: $0) }
        case .list(let list):
            list.first { $0.name.utf8.elementsEqual(name.utf8, by: asciiCaseInsensitiveEqual) }?.value
        }
    }
}

private func asciiCaseInsensitiveEqual(_ a: UInt8, _ b: UInt8) -> Bool {
    a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
}
