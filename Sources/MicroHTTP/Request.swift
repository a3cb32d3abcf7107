import CMicroHTTPD
import Glibc

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
    /// Which replies the server that asks sends. The acceptor sends only a stream, a read loop
    /// every answer but a stream; any other reply is dropped and libmicrohttpd asks the handler
    /// again, where it sends everything. A handler counts and logs only a reply it `sends`, so a
    /// request is counted once, where it is answered.
    public let sending: Sending
    private let headers: Headers

    public enum Sending: Sendable {
        case everything, streamsOnly, answers
    }

    /// Whether the server sends `reply` from where it asked (see `sending`).
    public func sends(_ reply: Reply) -> Bool {
        switch (sending, reply) {
        case (.everything, _), (.streamsOnly, .stream), (.answers, .prepared), (.answers, .response),
            (.answers, .deferred):
            true
        default: false
        }
    }

    private struct QueryParameter {
        let name: String
        let value: String?
    }

    private enum Headers {
        /// Valid for the duration of the handler call that receives the request; the query was
        /// taken off the target before libmicrohttpd parsed it (`QueryString`).
        case connection(OpaquePointer, query: QueryString)
        case list([HTTPHeader], query: [QueryParameter], fromLoopback: Bool)
        /// Read from the peeked bytes (`ReadLoop`), valid for the duration of the handler call.
        case peeked(RequestHead, fromLoopback: Bool)
    }

    /// A request built from values (for tests, or for handlers called without a server). A
    /// query string in `path` (`/a?b=1`) is split off into the query parameters (not decoded).
    public init(
        method: String, path: String, headers: [HTTPHeader] = [], body: [UInt8] = [], fromLoopback: Bool = true
    ) {
        let parts = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let items =
            parts.count == 2 && !parts[1].isEmpty
            ? parts[1].split(separator: "&", omittingEmptySubsequences: false) : []
        // A parameter without `=` has no value, as libmicrohttpd reads it.
        let query = items.map { (item: Substring) -> QueryParameter in
            let pair = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return QueryParameter(name: String(pair[0]), value: pair.count == 2 ? String(pair[1]) : nil)
        }
        self.method = method
        self.path = String(parts[0])
        self.body = body
        sending = .everything
        self.headers = .list(headers, query: query, fromLoopback: fromLoopback)
    }

    init(method: String, path: String, body: [UInt8], connection: OpaquePointer, query: QueryString) {
        self.method = method
        self.path = Self.originForm(path)
        self.body = body
        sending = .everything
        self.headers = .connection(connection, query: query)
    }

    /// A plain GET, HEAD or POST peeked at outside libmicrohttpd (`Acceptor`, `ReadLoop`).
    init(_ head: RequestHead, path: String, fromLoopback: Bool, sending: Sending) {
        method = head.method.rawValue
        self.path = path
        body = head.bodyBytes  // empty for a GET or HEAD
        self.sending = sending
        headers = .peeked(head, fromLoopback: fromLoopback)
    }

    /// The path of an absolute-form target (`http://host:8080/banner` → `/banner`), which RFC
    /// 9112 §3.2.2 says a server must accept; any other path as it is.
    static func originForm(_ path: String) -> String {
        let utf8 = path.utf8
        guard let first = utf8.first, first != UInt8(ascii: "/") else { return path }
        for scheme in ["http://", "https://"]
        where utf8.count >= scheme.utf8.count
            && zip(utf8, scheme.utf8).allSatisfy({ asciiCaseInsensitiveEqual($0, $1) })
        {
            let authorityAndPath = path.utf8.dropFirst(scheme.utf8.count)
            guard let slash = authorityAndPath.firstIndex(of: UInt8(ascii: "/")) else { return "/" }
            return String(path[slash...])
        }
        return path
    }

    /// The first header with this name; names compare case-insensitively, as HTTP says.
    public func header(_ name: String) -> String? {
        switch headers {
        case .connection(let connection, _):
            // withCString copies a short name to the stack; passing `name` as the argument
            // would convert it through a heap array on every read.
            name.withCString { MHD_lookup_connection_value(connection, MHD_ValueKind.HEADER_KIND, $0) }
                .map(Self.valueWithoutTrailingWhitespace)
        case .list(let list, _, _):
            list.first { $0.name.utf8.elementsEqual(name.utf8, by: asciiCaseInsensitiveEqual) }?.value
        case .peeked(let head, _):
            head.header(name)
        }
    }

    /// libmicrohttpd 0.9.75 drops the spaces and tabs before a header's value but keeps those
    /// after it, which RFC 9110 §5.5 says are not part of it either (the fast paths drop both;
    /// Fuzz/FuzzRequestHead holds the two to the same reading).
    private static func valueWithoutTrailingWhitespace(_ value: UnsafePointer<CChar>) -> String {
        var count = strlen(value)
        while count > 0 && (value[count - 1] == 0x20 || value[count - 1] == 0x09) { count -= 1 }
        return value.withMemoryRebound(to: UInt8.self, capacity: count) {
            String(decoding: UnsafeBufferPointer(start: $0, count: count), as: UTF8.self)
        }
    }

    /// The first query parameter with this name (`?position=2`), percent-decoded; names compare exactly.
    public func queryParameter(_ name: String) -> String? {
        queryParameters(name, name).0
    }

    /// The first query parameters named `first` and `second`, found in one pass over the query (a
    /// screen's read names its screen and its audience).
    public func queryParameters(_ first: String, _ second: String) -> (String?, String?) {
        switch headers {
        case .connection(_, let query):
            query.values(first, second)
        case .list(_, let query, _):
            (query.first { $0.name == first }?.value ?? nil, query.first { $0.name == second }?.value ?? nil)
        case .peeked(let head, _):
            head.queryParameters(first, second)
        }
    }

    /// Whether the client connected from this host (a loopback address).
    public var isFromLoopback: Bool {
        switch headers {
        case .connection(let connection, _): cmhd_client_is_loopback(connection) != 0
        case .list(_, _, let fromLoopback): fromLoopback
        case .peeked(_, let fromLoopback): fromLoopback
        }
    }
}

/// The method libmicrohttpd hands over, as a String: the usual ones are literals found by
/// comparing bytes, so that most requests do not build (and validate) a String for their method.
func methodName(_ method: UnsafePointer<CChar>) -> String {
    for (bytes, name) in knownMethods
    where strcmp(method, bytes.utf8Start.withMemoryRebound(to: CChar.self, capacity: 1) { $0 }) == 0 {
        return name
    }
    return String(cString: method)
}

/// A literal's bytes (NUL-terminated) and the same literal as a String.
private let knownMethods: [(StaticString, String)] = [
    ("GET", "GET"), ("HEAD", "HEAD"), ("POST", "POST"), ("PUT", "PUT"), ("PATCH", "PATCH"), ("DELETE", "DELETE"),
    ("OPTIONS", "OPTIONS"),
]

private func asciiCaseInsensitiveEqual(_ a: UInt8, _ b: UInt8) -> Bool {
    a == b || (a | 0x20 == b | 0x20 && (a | 0x20) >= UInt8(ascii: "a") && (a | 0x20) <= UInt8(ascii: "z"))
}
