import Foundation
import TestSupport
import Testing
import Threading

@testable import MicroHTTP

/// The acceptor and the read loops read each request far enough to sort it: a plain GET, HEAD or
/// POST they may answer themselves, everything else libmicrohttpd answers as before
/// (docs/ARCHITECTURE.md).
@Suite("Acceptor: sorting a request by its head")
struct RequestHeadTests {
    /// `body` with the head parsed from `text`, or nil when it is not `.plain`.
    static func withParsed<Result>(
        _ text: String, limit: Int = 8192, _ body: (RequestHead?) -> Result
    ) -> Result {
        Array(text.utf8).withUnsafeBytes { bytes in
            guard case .plain(let head) = RequestHead.parse(bytes, limit: limit) else { return body(nil) }
            return body(head)
        }
    }

    static func parsing(_ text: String, limit: Int = 8192) -> String {
        Array(text.utf8).withUnsafeBytes { bytes in
            switch RequestHead.parse(bytes, limit: limit) {
            case .needMore: "needMore"
            case .other: "other"
            case .plain: "plain"
            }
        }
    }

    @Test func aWholeHeadIsReadWithItsHeadersQueryAndLength() {
        let text =
            "GET /carousels/lobby/events?x=1&y HTTP/1.1\r\nHost: screens\r\nLast-Event-ID:  7 \r\n"
            + "Connection: keep-alive\r\n\r\nnext"
        Self.withParsed(text) { head in
            guard let head else {
                Issue.record("not plain: \(Self.parsing(text))")
                return
            }
            #expect(head.method == .get)
            #expect(head.pathText == "/carousels/lobby/events")
            #expect(head.queryText == "x=1&y")
            #expect(head.queryParameter("x") == "1")
            #expect(head.queryParameter("y") == nil, "no value, as libmicrohttpd reads it")
            #expect(head.queryParameter("z") == nil)
            #expect(head.queryParameters("z", "x") == (nil, "1"), "two names found in one pass")
            #expect(head.queryParameters("x", "y") == ("1", nil))
            #expect(head.header("last-event-id") == "7")
            #expect(head.header("HOST") == "screens")
            #expect(head.header("Accept") == nil)
            #expect(
                head.headers == [
                    HTTPHeader("Host", "screens"), HTTPHeader("Last-Event-ID", "7"),
                    HTTPHeader("Connection", "keep-alive"),
                ])
            #expect(head.length == text.utf8.count - "next".utf8.count)
        }
    }

    @Test func twoQueryParametersAreTheFirstOfEachName() {
        let text = "GET /banner?audience&screen=s1&audience=de&screen=s2 HTTP/1.1\r\nHost: screens\r\n\r\n"
        Self.withParsed(text) { head in
            guard let head else {
                Issue.record("not plain: \(Self.parsing(text))")
                return
            }
            #expect(head.queryParameters("screen", "audience") == ("s1", nil), "the first audience has no value")
            #expect(head.queryParameters("screen", "screen") == ("s1", "s1"))
            #expect(head.queryParameters("lang", "screen") == (nil, "s1"))
        }
    }

    /// libmicrohttpd keeps a record per header in its pool: a head that might not fit is its to
    /// answer (it refuses one that does not), never the fast paths'. A query costs it none: the
    /// server reads queries itself (QueryString).
    @Test func aHeadThatMightNotFitLibmicrohttpdsPoolIsLeftToIt() {
        func head(headers: Int) -> String {
            "GET /banner HTTP/1.1\r\n" + String(repeating: "X-A: b\r\n", count: headers) + "Host: x\r\n\r\n"
        }
        #expect(Self.parsing(head(headers: 200)) == "plain")
        #expect(Self.parsing(head(headers: 240)) == "other")
        let manyParameters =
            "GET /banner?" + Array(repeating: "a", count: 2000).joined(separator: "&") + " HTTP/1.1\r\nHost: x\r\n\r\n"
        #expect(Self.parsing(manyParameters) == "plain")
    }

    @Test func aHeadRequestIsPlainToo() {
        Self.withParsed("HEAD /banner HTTP/1.1\r\nHost: a\r\n\r\n") { head in
            #expect(head?.method == .head)
            #expect(head?.pathText == "/banner")
            #expect(head?.queryText == "")
        }
    }

    /// Every prefix of a head waits for more; none is mistaken for something else.
    @Test(arguments: [
        "GET /banner/events HTTP/1.1\r\nHost: screens\r\nAccept: text/event-stream\r\n\r\n",
        "HEAD /banner HTTP/1.1\r\nHost: screens\r\n\r\n",
    ])
    func everyPartOfAHeadWaitsForTheRest(_ text: String) {
        let bytes = Array(text.utf8)
        for end in 1..<bytes.count {
            let parsing = Self.parsing(String(decoding: bytes[..<end], as: UTF8.self))
            guard parsing == "needMore" else {
                Issue.record("\(end) bytes parsed as \(parsing)")
                return
            }
        }
    }

    @Test(arguments: [
        "PUT /carousels/a HTTP/1.1\r\n",  // another method
        "OPTIONS /banner HTTP/1.1\r\n",
        "GET /banner HTTP/1.0\r\n",  // HTTP/1.0: no keep-alive by default, no chunked body
        "GET /caro%75sels/a/events HTTP/1.1\r\n",  // needs decoding
        "GET /a+b HTTP/1.1\r\n",
        "GET /banner HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",  // a body
        "GET /banner HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /banner HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n",
        "GET /banner HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\n\r\n",
        "GET /banner HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n",  // the answer must close it
        "GET /banner/events HTTP/1.1\r\nAccept: */*\r\n\r\n",  // no Host
        "GET /banner/events HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // an obsolete line fold
        "GET /banner/events HTTP/1.1\r\nHost: a\r\nBad Name: b\r\n\r\n",
        "GET /banner/events HTTP/1.1\r\nHost: a\r\n: b\r\n\r\n",
        "GARBAGE\r\n",
    ])
    func anythingElseIsLeftToLibmicrohttpd(_ text: String) {
        #expect(Self.parsing(text) == "other")
    }

    @Test func aPostIsPlainWithItsWholeBody() {
        let text = "POST /carousels/a/screens/s/receipts HTTP/1.1\r\nHost: a\r\nContent-Length:  5\r\n\r\nhellonext"
        Self.withParsed(text) { head in
            #expect(head?.method == .post)
            #expect(head?.pathText == "/carousels/a/screens/s/receipts")
            #expect(head?.bodyBytes == Array("hello".utf8))
            #expect(head?.length == text.utf8.count - "next".utf8.count)
        }
        Self.withParsed("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n") { head in
            #expect(head?.bodyBytes == [])
        }
        // Neither Content-Length nor Transfer-Encoding: no body (RFC 9112 §6.3), what follows is
        // the next request.
        let bare = "POST /banner/next HTTP/1.1\r\nHost: a\r\n\r\nPOST"
        Self.withParsed(bare) { head in
            #expect(head?.bodyBytes == [])
            #expect(head?.length == bare.utf8.count - "POST".utf8.count)
        }
    }

    /// Until its last byte has come a POST waits; a body that cannot come whole within the limit,
    /// or is over the server's, goes to libmicrohttpd.
    @Test func aPostWaitsForItsBodyWithinTheLimits() {
        let text = "POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\n0123456789"
        let bytes = Array(text.utf8)
        for end in 1..<bytes.count {
            #expect(Self.parsing(String(decoding: bytes[..<end], as: UTF8.self)) == "needMore", "\(end) bytes")
        }
        #expect(Self.parsing(text) == "plain")
        #expect(Self.parsing(text, limit: bytes.count) == "plain")
        #expect(Self.parsing(String(text.dropLast()), limit: bytes.count - 1) == "other", "it cannot all be peeked")
        Array(text.utf8).withUnsafeBytes { raw in
            guard case .other = RequestHead.parse(raw, limit: 8192, maxBodySize: 9) else {
                Issue.record("a body over the server's limit is libmicrohttpd's to refuse")
                return
            }
        }
    }

    @Test(arguments: [
        "+5", "5 ", "05", "0x5", "5,5", "", "123456", "-1", "5\r\nContent-Length: 5",
    ])
    func aContentLengthThatIsNotPlainIsLeftToLibmicrohttpd(_ value: String) {
        #expect(Self.parsing("POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: \(value)\r\n\r\nhello") == "other")
    }

    @Test(arguments: [
        "Transfer-Encoding: chunked\r\n", "Expect: 100-continue\r\n", "Connection: close\r\n",
        "Upgrade: h2c\r\n",
    ])
    func aPostAskingForMoreIsLeftToLibmicrohttpd(_ header: String) {
        #expect(Self.parsing("POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\(header)\r\nhello") == "other")
    }

    @Test func aHeadLargerThanTheLimitIsLeftToLibmicrohttpd() {
        let text = "GET /banner/events HTTP/1.1\r\nHost: a\r\nCookie: \(String(repeating: "c", count: 200))"
        #expect(Self.parsing(text, limit: 100) == "other")
        #expect(Self.parsing(text, limit: 1000) == "needMore")
    }
}

/// Streams for `/stream`, plain answers for everything else; `/refused` may stream but does not.
final class SortingHandler: HTTPHandler {
    let streaming = StreamingHandler(holder: .acceptor)
    let answered = Counter()

    func mayStream(_ path: Substring) -> Bool { path == "/stream" || path == "/refused" }

    func respond(to request: borrowing Request) -> Reply {
        if request.path == "/stream" { return streaming.respond(to: request) }
        answered.increment()
        let status = request.path == "/refused" ? 404 : 200
        return .response(Response(status: status, body: Array("\(request.method) \(request.path)".utf8)))
    }
}

@Suite("Acceptor: live")
struct AcceptorTests {
    @Test func otherRequestsKeepTheirConnectionAliveAndMayStreamLater() async throws {
        let handler = SortingHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        for _ in 0..<3 {
            let response = try await connection.send("GET", "/other")
            #expect(response.status == 200)
            #expect(response.text == "GET /other")
        }
        // Not the connection's first request: libmicrohttpd holds this stream.
        #expect(try await connection.openStream("/stream").status == 200)
        let stream = try #require(handler.streaming.latest)
        #expect(stream.send(Array("held by libmicrohttpd".utf8)))
        #expect(try await connection.readChunk() == Array("held by libmicrohttpd".utf8))
    }

    /// The handler may stream there but answers otherwise: libmicrohttpd asks it again and sends
    /// that answer, on a connection that stays open.
    @Test func aSubscriptionAnsweredOtherwiseIsAnsweredByLibmicrohttpd() async throws {
        let handler = SortingHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let refused = try await connection.send("GET", "/refused")
        #expect(refused.status == 404)
        #expect(refused.text == "GET /refused")
        #expect(try await connection.send("GET", "/other").status == 200, "the connection stays open")
    }

    /// A subscription held by the acceptor is released as soon as its client hangs up, without
    /// waiting for the next event.
    @Test func aClientThatHangsUpIsReleasedAtOnce() async throws {
        let handler = SortingHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        var connection: HTTPConnection? = try HTTPConnection(port: server.port)
        _ = try await connection?.openStream("/stream")
        let stream = try #require(handler.streaming.latest)
        connection = nil
        #expect(await eventually { handler.streaming.closed.count == 1 })
        #expect(!stream.isOpen)
    }

    /// Written in pieces, a subscription still comes whole to the handler, with its headers.
    @Test func aSubscriptionSentInPiecesIsServed() async throws {
        let handler = SortingHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        for piece in ["GET /str", "eam HTTP/1.1\r\nHo", "st: 127.0.0.1\r\n", "\r\n"] {
            try await connection.write(Array(piece.utf8))
        }
        let head = try await connection.readResponse(toHead: true)
        #expect(head.status == 200)
        #expect(head.header("Transfer-Encoding") == "chunked")
        #expect(head.header("Date") != nil)
        let stream = try #require(handler.streaming.latest)
        #expect(stream.send(Array("whole".utf8)))
        #expect(try await connection.readChunk() == Array("whole".utf8))
    }

    /// A client that connects and sends nothing is closed after the connection timeout.
    @Test func aSilentConnectionIsClosedAfterTheTimeout() async throws {
        let handler = SortingHandler()
        let clock = ServerClock.manual()
        let server = try HTTPServer(
            configuration: ServerConfiguration(
                host: "127.0.0.1", port: 0, threads: 1, connectionTimeoutSeconds: 1, clock: clock),
            handler: handler)
        defer { stopLater(server) }
        let silent = try HTTPConnection(port: server.port)
        #expect(try await httpRequest(port: server.port, "GET", "/other").status == 200, "accepted after it")
        #expect(!silent.isClosedByPeer)
        #expect(await clock.advance(by: .milliseconds(1100), until: silent))
        #expect(try await httpRequest(port: server.port, "GET", "/other").status == 200)
    }
}
