import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

/// Heads RFC 9112 says to refuse, and heads that must get an answer, on both engines: with the
/// fast paths (the acceptor and read loops peek first) and with libmicrohttpd alone.
@Suite("MicroHTTP framing, both ways")
struct FramingTests {
    static func startServer(_ handler: any HTTPHandler, fastPaths: Bool) throws -> HTTPServer {
        try HTTPServer(
            configuration: ServerConfiguration(
                host: "127.0.0.1", port: 0, threads: 2,
                // A loaded sanitizer run can leave a test's connection idle past the usual 15 s;
                // a head left waiting would also wait that long, which the client does not.
                connectionTimeoutSeconds: Int(60 * sanitizerAllowance), maxBodySize: 1024, fastPaths: fastPaths),
            handler: handler)
    }

    @Test(
        arguments: [true, false],
        [
            (
                "POST /x HTTP/1.1\r\nHost: x\r\nContent-Length : 34\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n",
                400,
                "header name 'Content-Length ' is not a token (a space before the colon?)"
            ),
            ("GET /healthz\0/../banner HTTP/1.1\r\nHost: x\r\n\r\n", 400, "a NUL byte in the request target"),
            ("GET /tokens%00x HTTP/1.1\r\nHost: x\r\n\r\n", 400, "an encoded NUL (%00) in the request path"),
            ("GET /banner%00/x?a=1 HTTP/1.1\r\nHost: x\r\n\r\n", 400, "an encoded NUL (%00) in the request path"),
            ("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "several Host headers; send exactly one"),
            (
                "GET /x HTTP/1.1\r\nHost: x\r\nOrigin: http://x\r\norigin: https://evil.example\r\n\r\n", 400,
                "several Origin headers; send at most one"
            ),
            (
                "GET /x HTTP/1.1\r\nHost: x\r\nSec-Fetch-Site: same-origin\r\nSec-Fetch-Site: cross-site\r\n\r\n", 400,
                "several Sec-Fetch-Site headers; send at most one"
            ),
            (
                "POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: identity\r\n\r\n", 501,
                "transfer coding 'identity' is not supported; send chunked or Content-Length"
            ),
        ])
    func framingToRefuseIsRefusedWithoutCallingTheHandler(_ fastPaths: Bool, _ refused: (String, Int, String))
        async throws
    {
        let (head, status, reason) = refused
        let handler = EchoHandler()
        let server = try Self.startServer(handler, fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(Array(head.utf8))
        let response = try await connection.readResponse()
        #expect(response.status == status)
        #expect(response.text == reason + "\n")
        #expect(handler.calls.count == 0, "nothing of it reached the handler, the smuggled request neither")
        #expect(await connection.waitForClose(), "where the next request would start is unknown")
    }

    /// Chunked is read as chunked whatever its case; what libmicrohttpd would not read as chunked
    /// (it keeps the spaces after a value) is refused, never left waiting for the connection to end.
    @Test(arguments: [true, false], [("Chunked", 200), ("chunked ", 501), ("gzip, chunked", 501)])
    func onlyChunkedIsReadAsATransferCoding(_ fastPaths: Bool, _ coding: (String, Int)) async throws {
        let server = try Self.startServer(EchoHandler(), fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(
            Array("POST /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: \(coding.0)\r\n\r\n2\r\nhi\r\n0\r\n\r\n".utf8))
        let response = try await connection.readResponse()
        #expect(response.status == coding.1)
        if coding.1 == 200 { #expect(response.text == "POST /x x-test=- body=hi") }
    }

    /// A head with bare LF line ends gets an answer, not a wait for a CRLF that never comes.
    @Test(arguments: [true, false], ["GET /x HTTP/1.1\nHost: x\n\n", "GET /x HTTP/1.1\r\nHost: x\n\n"])
    func aHeadWithBareLineFeedsIsAnswered(_ fastPaths: Bool, _ head: String) async throws {
        let server = try Self.startServer(ReadingHandler(), fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(Array(head.utf8))
        let response = try await connection.readResponse()
        #expect(response.status == 404)
        #expect(try await connection.send("GET", "/small").text == "small", "and the connection goes on")
    }

    /// A read loop peeks 8 KiB at a time: a request waiting behind a head of exactly that size is
    /// already in the socket, and no new byte will say so.
    @Test(arguments: [true, false])
    func aRequestPipelinedAfterAHeadThatFillsThePeekIsAnswered(_ fastPaths: Bool) async throws {
        let server = try Self.startServer(ReadingHandler(), fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.send("GET", "/small")  // in a read loop now, with fast paths
        let start = "GET /small HTTP/1.1\r\nHost: x\r\nX-Pad: "
        let padding = String(repeating: "p", count: Acceptor.headLimit - start.utf8.count - 4)
        let exact = start + padding + "\r\n\r\n"
        #expect(exact.utf8.count == Acceptor.headLimit)
        try await connection.write(Array((exact + "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n").utf8))
        #expect(try await connection.readResponse().text == "small")
        #expect(try await connection.readResponse().text.hasPrefix("GET /echo "))
    }

    /// RFC 9112 §3.2.2: a server accepts a target in absolute form, and reads its path.
    @Test(arguments: [true, false], ["http://localhost:8080/echo", "HTTPS://example.com/echo", "http://x"])
    func anAbsoluteFormTargetIsReadAsItsPath(_ fastPaths: Bool, _ target: String) async throws {
        let server = try Self.startServer(EchoHandler(), fastPaths: fastPaths)
        defer { stopLater(server) }
        let response = try await httpRequest(port: server.port, "GET", target)
        #expect(response.status == 200)
        #expect(response.text.hasPrefix("GET \(target.hasSuffix("/echo") ? "/echo" : "/") "))
    }

    /// libmicrohttpd 0.9.75 kept a 64-byte record per query parameter in the connection's 16 KiB
    /// pool and never answered a request with more than fit (about 230; it waited for the
    /// timeout): the server reads queries itself (QueryString), decoded as libmicrohttpd did.
    @Test(arguments: [true, false])
    func aQueryOfThousandsOfParametersIsAnswered(_ fastPaths: Bool) async throws {
        let server = try Self.startServer(QueryEchoHandler(), fastPaths: fastPaths)
        defer { stopLater(server) }
        let many = (0..<1500).map { "k\($0)=v" }.joined(separator: "&")
        let response = try await httpRequest(port: server.port, "GET", "/x?first=caf%C3%A9+1&\(many)&last=%26")
        #expect(response.status == 200)
        #expect(response.text == "café 1 &")
    }
}

/// Answers the query parameters `first` and `last`, as the handler reads them.
private struct QueryEchoHandler: HTTPHandler {
    func respond(to request: borrowing Request) -> Reply {
        let (first, last) = request.queryParameters("first", "last")
        return .response(Response(status: 200, body: Array("\(first ?? "-") \(last ?? "-")".utf8)))
    }
}
