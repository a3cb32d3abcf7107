import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

extension ServerClock {
    /// Moves the clock on by `step` until the server has cut `connection`: a connection the
    /// server had not accepted yet when the clock last moved took its deadline from the clock as
    /// it stood then. A connection never cut fails the caller's expectation (after a generous
    /// deadline, `eventually`).
    func advance(by step: Duration, until connection: HTTPConnection) async -> Bool {
        await eventually {
            advance(by: step)
            return connection.isClosedByPeer
        }
    }
}

/// A server whose timeouts run on `clock`, a test's manual one: a timeout passes when the test
/// moves the clock past it, however long the test itself takes (docs/TESTING.md).
func startServer(
    _ handler: any HTTPHandler, connectionTimeout: Int, clock: ServerClock, fastPaths: Bool = true
) throws -> HTTPServer {
    try HTTPServer(
        configuration: ServerConfiguration(
            host: "127.0.0.1", port: 0, threads: 2, connectionTimeoutSeconds: connectionTimeout, maxBodySize: 1024,
            fastPaths: fastPaths, clock: clock),
        handler: handler)
}

@Suite("MicroHTTP hardening")
struct HardeningTests {
    @Test(arguments: [
        ("Content-Length: 2\r\nContent-Length: 12\r\n", "several Content-Length headers; send exactly one"),
        (
            "Content-Length: 2\r\nTransfer-Encoding: chunked\r\n",
            "both Content-Length and Transfer-Encoding; send one of them"
        ),
    ])
    func ambiguousFramingIsRefusedWithoutCallingTheHandler(_ headers: String, _ reason: String) async throws {
        let handler = EchoHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(Array("POST /x HTTP/1.1\r\nHost: x\r\n\(headers)\r\n{}".utf8))
        let response = try await connection.readResponse()
        #expect(response.status == 400)
        #expect(response.text == reason + "\n")
        #expect(handler.calls.count == 0)
        #expect(await connection.waitForClose(), "where the next request would start is unknown")
    }

    @Test func http11WithoutHostIsRefused() async throws {
        let handler = EchoHandler()
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(Array("GET /x HTTP/1.1\r\n\r\n".utf8))
        #expect(try await connection.readResponse().status == 400)
        let old = try HTTPConnection(port: server.port)
        try await old.write(Array("GET /x HTTP/1.0\r\n\r\n".utf8))
        #expect(try await old.readResponse().status == 200, "HTTP/1.0 has no Host requirement")
    }

    /// Every byte is activity, yet the whole head is due within the timeout: the bytes keep
    /// coming a tenth of it apart on the server's clock, and the connection is cut once it has
    /// passed, while a client that asks at once is served all along.
    @Test(arguments: [true, false])
    func aClientTricklingItsHeadersIsCutAfterTheTimeoutWhileOthersAreServed(_ fastPaths: Bool) async throws {
        let clock = ServerClock.manual()
        let server = try startServer(EchoHandler(), connectionTimeout: 1, clock: clock, fastPaths: fastPaths)
        defer { stopLater(server) }
        let slow = try HTTPConnection(port: server.port)
        for byte in Array("GET /slow HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8).prefix(9) {
            try await slow.write([byte])
            clock.advance(by: .milliseconds(100))
            #expect(try await httpRequest(port: server.port, "GET", "/quick").status == 200)
        }
        // 0.9 s: the quick requests went through the same loops, after every move of the clock.
        #expect(!slow.isClosedByPeer, "cut before the timeout")
        try await slow.write(Array("aaaa".utf8))
        #expect(
            await clock.advance(by: .milliseconds(200), until: slow),
            "cut once the timeout passed, though it never stopped sending")
        #expect(try await httpRequest(port: server.port, "GET", "/after").status == 200)
    }

    @Test(arguments: [true, false])
    func aClientTricklingItsBodyIsCutToo(_ fastPaths: Bool) async throws {
        let handler = EchoHandler()
        let clock = ServerClock.manual()
        let server = try startServer(handler, connectionTimeout: 1, clock: clock, fastPaths: fastPaths)
        defer { stopLater(server) }
        let slow = try HTTPConnection(port: server.port)
        try await slow.write(Array("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        for _ in 0..<3 {
            try await slow.write(Array(repeating: 65, count: 10))
            clock.advance(by: .milliseconds(400))
        }
        #expect(await clock.advance(by: .milliseconds(400), until: slow))
        #expect(handler.calls.count == 0)
    }

    @Test func eightHundredIdleConnectionsDoNotStopANewClient() async throws {
        let server = try startServer(EchoHandler())
        defer { stopLater(server) }
        let idle = try (0..<800).map { _ in try HTTPConnection(port: server.port) }
        #expect(try await httpRequest(port: server.port, "GET", "/after").status == 200)
        #expect(idle.allSatisfy { !$0.isClosedByPeer })
    }

    /// An event stream waits for events, not for a request: the timeout never cuts it.
    @Test(arguments: [true, false])
    func aStreamOutlivesTheIdleTimeout(_ fastPaths: Bool) async throws {
        let handler = StreamingHandler()
        let clock = ServerClock.manual()
        let server = try startServer(handler, connectionTimeout: 1, clock: clock, fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.openStream("/events")
        let stream = try #require(handler.latest)
        // A connection opened after the stream that sends nothing is closed once the timeout passed.
        let idle = try HTTPConnection(port: server.port)
        #expect(await clock.advance(by: .seconds(2), until: idle))
        #expect(stream.send(Array("still here".utf8)))
        #expect(try await connection.readChunk() == Array("still here".utf8))
    }

    @Test(arguments: [true, false])
    func anIdleKeepAliveConnectionIsClosedAfterTheTimeout(_ fastPaths: Bool) async throws {
        let clock = ServerClock.manual()
        let server = try startServer(EchoHandler(), connectionTimeout: 1, clock: clock, fastPaths: fastPaths)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.send("GET", "/x")
        clock.advance(by: .milliseconds(900))
        #expect(try await connection.send("GET", "/y").status == 200, "idle less than the timeout: kept")
        #expect(await clock.advance(by: .milliseconds(1100), until: connection))
    }
}

@Suite("libmicrohttpd version check")
struct LibraryVersionTests {
    @Test(arguments: [
        ("0.9.75", true), ("0.9.77", true), ("1.0.0", true), ("0.10.0", true),
        ("0.9.74", false), ("0.9.9", false), ("0.8.99", false), ("", false), ("0.9", false), ("x.y.z", false),
    ])
    func olderLibrariesAreRefused(_ version: String, _ supported: Bool) {
        #expect(LibraryVersion.isSupported(version) == supported)
    }

    @Test func theRefusalSaysWhatToInstall() {
        #expect(
            HTTPServerError.unsupportedLibrary(found: "0.9.72").description
                == "libmicrohttpd 0.9.72 is too old; 0.9.75 or later is needed (Debian 12: apt-get install libmicrohttpd12)"
        )
    }
}
