import Foundation
import TestSupport
import Testing

/// The seed of the random input: new each run (set CAROUSEL_TEST_SEED to replay one), and in the
/// test's name, so a failure says how to replay it.
let randomSeed =
    ProcessInfo.processInfo.environment["CAROUSEL_TEST_SEED"].flatMap { UInt64($0) }
    ?? UInt64.random(in: 1...UInt64.max)

/// SplitMix64: the same bytes for the same seed on every machine.
func randomBytes(count: Int, seed: UInt64) -> [UInt8] {
    var state = seed
    return (0..<count).map { _ in
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return UInt8(truncatingIfNeeded: z ^ (z >> 31))
    }
}

@Suite("Garbage on the port")
struct GarbageTests {
    static let inputs: [(String, [UInt8])] = [
        (
            "a TLS ClientHello",
            [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + Array(repeating: 0, count: 500)
        ),
        ("NUL bytes", Array(repeating: 0, count: 4096)),
        ("random bytes (seed \(randomSeed))", randomBytes(count: 8192, seed: randomSeed)),
        (
            "a 100 KB request line",
            Array("GET /\(String(repeating: "a", count: 100_000)) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        ),
        (
            "a 200 KB header",
            Array("GET /banner HTTP/1.1\r\nHost: x\r\nX-Big: \(String(repeating: "b", count: 200_000))\r\n\r\n".utf8)
        ),
        (
            "conflicting Content-Length",
            Array("POST /banner/next HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello".utf8)
        ),
        (
            "a negative Content-Length",
            Array("POST /banner/next HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n".utf8)
        ),
        (
            "bad chunked framing",
            Array(
                "PUT /banner/index HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n".utf8)
        ),
        ("an unknown HTTP version", Array("POST /banner/next HTTP/7.1\r\nHost: x\r\n\r\n".utf8)),
        ("a bare newline flood", Array(repeating: 0x0A, count: 10_000)),
        (
            "a request smuggled in a header",
            Array("GET /banner HTTP/1.1\r\nHost: x\r\nX: a\rPOST /banner/next HTTP/1.1\r\n\r\n".utf8)
        ),
        ("UTF-8 garbage in the path", Array("GET /\u{FFFD}\u{0}/banner HTTP/1.1\r\nHost: x\r\n\r\n".utf8)),
        // Subscriptions, which the acceptor reads itself (docs/ARCHITECTURE.md).
        (
            "a subscription with random headers (seed \(randomSeed))",
            Array("GET /banner/events HTTP/1.1\r\nHost: x\r\n".utf8) + randomBytes(count: 2048, seed: randomSeed)
                + Array("\r\n\r\n".utf8)
        ),
        (
            "a subscription head past 8 KiB",
            Array("GET /banner/events HTTP/1.1\r\nHost: x\r\nX: \(String(repeating: "c", count: 10_000))\r\n\r\n".utf8)
        ),
        (
            "a command after a subscription",
            Array("GET /banner/events HTTP/1.1\r\nHost: x\r\n\r\nPOST /banner/next HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        ),
        (
            "a subscription with a body",
            Array("GET /banner/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello".utf8)
        ),
        ("a subscription without Host", Array("GET /banner/events HTTP/1.1\r\n\r\n".utf8)),
    ]

    @Test func nothingOnTheWireCrashesTheServiceOrChangesTheCarousel() async throws {
        let live = try await LiveService()
        let before = try await live.state()
        for (name, bytes) in Self.inputs {
            let connection = try HTTPConnection(port: live.port, timeoutSeconds: 1)
            try? await connection.write(bytes)
            _ = try? await connection.readResponse()  // an error answer, a close, or nothing: all fine
            let health = try await live.request("GET", "/healthz")
            #expect(health.status == 200, "still serving after \(name)")
        }
        let after = try await live.state()
        #expect(after["version"] as? Int == before["version"] as? Int, "no garbage moved the carousel")
        #expect(after["index"] as? Int == before["index"] as? Int)
    }
}
