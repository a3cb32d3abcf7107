import Foundation
import Locking
import TestSupport
import Testing

@testable import MicroHTTP

/// The acceptor reads each connection's first request far enough to sort it: a subscription it
/// holds itself, everything else libmicrohttpd answers as before (docs/ARCHITECTURE.md).
@Suite("Acceptor: sorting a first request")
struct RequestHeadTests {
    static func sort(_ text: String, limit: Int = 8192) -> RequestHead.Sorting {
        Array(text.utf8).withUnsafeBytes { bytes in
            RequestHead.sort(bytes, limit: limit, isStreamPath: { $0.hasSuffix("/events") })
        }
    }

    @Test func aWholeSubscriptionIsReadWithItsHeadersAndLength() throws {
        let text = "GET /carousels/lobby/events?x=1 HTTP/1.1\r\nHost: screens\r\nLast-Event-ID:  7 \r\n\r\nnext"
        guard case .subscription(let head) = Self.sort(text) else {
            Issue.record("not sorted as a subscription: \(Self.sort(text))")
            return
        }
        #expect(head.path == "/carousels/lobby/events")
        #expect(head.query == "x=1")
        #expect(head.headers == [HTTPHeader("Host", "screens"), HTTPHeader("Last-Event-ID", "7")])
        #expect(head.length == text.utf8.count - "next".utf8.count)
    }

    /// Every prefix of a subscription waits for more; none is mistaken for something else.
    @Test func everyPartOfASubscriptionWaitsForTheRest() {
        let text = "GET /banner/events HTTP/1.1\r\nHost: screens\r\nAccept: text/event-stream\r\n\r\n"
        let bytes = Array(text.utf8)
        for end in 1..<bytes.count {
            let sorting = bytes[..<end].withUnsafeBytes {
                RequestHead.sort($0, limit: 8192, isStreamPath: { $0.hasSuffix("/events") })
            }
            guard case .needMore = sorting else {
                Issue.record("\(end) bytes sorted as \(sorting)")
                return
            }
        }
    }

    @Test(arguments: [
        "POST /banner/events HTTP/1.1\r\n",  // another method
        "GET /banner HTTP/1.1\r\n",  // not a stream's path
        "GET /banner/events HTTP/1.0\r\n",  // HTTP/1.0: no chunked body
        "GET /caro%75sels/a/events HTTP/1.1\r\n",  // needs decoding
        "GET /banner/events HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",  // a body
        "GET /banner/events HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
        "GET /banner/events HTTP/1.1\r\nAccept: */*\r\n\r\n",  // no Host
        "GET /banner/events HTTP/1.1\r\nHost: a\r\n folded\r\n\r\n",  // an obsolete line fold
        "GET /banner/events HTTP/1.1\r\nHost: a\r\nBad Name: b\r\n\r\n",
        "GARBAGE\r\n",
    ])
    func anythingElseIsLeftToLibmicrohttpd(_ text: String) {
        guard case .other = Self.sort(text) else {
            Issue.record("sorted as \(Self.sort(text))")
            return
        }
    }

    @Test func aHeadLargerThanTheLimitIsLeftToLibmicrohttpd() {
        let text = "GET /banner/events HTTP/1.1\r\nHost: a\r\nCookie: \(String(repeating: "c", count: 200))"
        guard case .other = Self.sort(text, limit: 100) else {
            Issue.record("sorted as \(Self.sort(text, limit: 100))")
            return
        }
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
        defer { server.stop() }
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
        defer { server.stop() }
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
        defer { server.stop() }
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
        defer { server.stop() }
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
        let server = try HTTPServer(
            configuration: ServerConfiguration(host: "127.0.0.1", port: 0, threads: 1, connectionTimeoutSeconds: 1),
            handler: handler)
        defer { server.stop() }
        let silent = try HTTPConnection(port: server.port)
        #expect(await silent.waitForClose())
        #expect(try await HTTPConnection(port: server.port).send("GET", "/other").status == 200)
    }
}
