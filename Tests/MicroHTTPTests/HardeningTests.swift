import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

func startServer(_ handler: any HTTPHandler, connectionTimeout: Int) throws -> HTTPServer {
    try HTTPServer(
        configuration: ServerConfiguration(
            host: "127.0.0.1", port: 0, threads: 2, connectionTimeoutSeconds: connectionTimeout, maxBodySize: 1024),
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

    @Test func aClientTricklingItsHeadersIsCutAfterTheTimeoutWhileOthersAreServed() async throws {
        let server = try startServer(EchoHandler(), connectionTimeout: 1)
        defer { stopLater(server) }
        let slow = try HTTPConnection(port: server.port)
        var cut = false
        for byte in Array("GET /slow HTTP/1.1\r\nHost: x\r\nX-Slow: ".utf8) + Array(repeating: 97, count: 200) {
            do {
                try await slow.write([byte])
            } catch {
                cut = true
                break
            }
            #expect(
                try await onAFreshConnection(port: server.port) { try await $0.send("GET", "/quick") }.status == 200)
            if slow.isClosedByPeer {
                cut = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))  // the client's pace, not a wait for the server
        }
        // At most ~240 bytes at that pace (24 s, of a 1 s timeout) before the loop gives up.
        #expect(cut, "a byte every 100 ms never leaves the connection idle, yet it is cut")
    }

    @Test func aClientTricklingItsBodyIsCutToo() async throws {
        let handler = EchoHandler()
        let server = try startServer(handler, connectionTimeout: 1)
        defer { stopLater(server) }
        let slow = try HTTPConnection(port: server.port)
        try await slow.write(Array("POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n".utf8))
        #expect(
            await eventually {
                (try? await slow.write([65])) == nil || slow.isClosedByPeer
            })
        #expect(handler.calls.count == 0)
    }

    @Test func eightHundredIdleConnectionsDoNotStopANewClient() async throws {
        let server = try startServer(EchoHandler())
        defer { stopLater(server) }
        let idle = try (0..<800).map { _ in try HTTPConnection(port: server.port) }
        #expect(try await httpRequest(port: server.port, "GET", "/after").status == 200)
        #expect(idle.allSatisfy { !$0.isClosedByPeer })
    }

    @Test func aStreamOutlivesTheIdleTimeout() async throws {
        let handler = StreamingHandler()
        let server = try startServer(handler, connectionTimeout: 1)
        defer { stopLater(server) }
        let connection = try await onAFreshConnection(port: server.port) { connection in
            _ = try await connection.openStream("/events")
            return connection
        }
        let stream = try #require(handler.latest)
        // A connection opened after the stream that sends nothing is closed once the timeout passed.
        let idle = try HTTPConnection(port: server.port)
        #expect(await idle.waitForClose())
        #expect(stream.send(Array("still here".utf8)))
        #expect(try await connection.readChunk() == Array("still here".utf8))
    }

    @Test func anIdleKeepAliveConnectionIsClosedAfterTheTimeout() async throws {
        let server = try startServer(EchoHandler(), connectionTimeout: 1)
        defer { stopLater(server) }
        let connection = try await onAFreshConnection(port: server.port) { connection in
            _ = try await connection.send("GET", "/x")
            return connection
        }
        #expect(await connection.waitForClose())
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
