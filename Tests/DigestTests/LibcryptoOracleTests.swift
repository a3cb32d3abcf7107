import Digest
import Foundation
import TestSupport
import Testing

/// SHA-256 and HMAC-SHA256 held to OpenSSL's libcrypto, through Python's `hashlib` and `hmac`
/// (which call it: the script checks that they do): random messages of every length around the
/// 64-byte block and its padding, a few long ones, and keys shorter and longer than a block.
@Suite("SHA-256 and HMAC against libcrypto")
struct LibcryptoOracleTests {
    static let oracle = #"""
        import _hashlib, hashlib, hmac, sys
        assert hashlib.sha256 is _hashlib.openssl_sha256, "hashlib is not OpenSSL's here"
        for line in sys.stdin:
            key, message = (bytes.fromhex(part) for part in line.split(",", 1))
            print(hashlib.sha256(message).hexdigest(), hmac.new(key, message, "sha256").hexdigest())
        """#

    @Test func randomMessagesAndKeysGiveLibcryptosDigestsAndMACs() throws {
        var generator = SystemRandomNumberGenerator()
        func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } }
        let lengths = Array(0...200) + [255, 256, 447, 448, 511, 512, 1000, 4095, 4096, 65_537, 1_000_003]
        let cases = lengths.map { length in
            (key: bytes(Int.random(in: 0...150, using: &generator)), message: bytes(length))
        }
        let hex = { (data: [UInt8]) in data.map { String(format: "%02x", $0) }.joined() }
        let folder = try temporaryDirectory()
        let script = folder.appendingPathComponent("oracle.py")
        let input = folder.appendingPathComponent("cases")
        try Self.oracle.write(to: script, atomically: true, encoding: .utf8)
        try cases.map { "\(hex($0.key)),\(hex($0.message))\n" }.joined().write(
            to: input, atomically: true, encoding: .utf8)
        let (status, output) = try shellOutput(
            "/usr/bin/python3 \(shellQuoted(script.path)) < \(shellQuoted(input.path))")
        try #require(status == 0, "the oracle failed: \(output)")
        let answers = output.split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        try #require(answers.count == cases.count, "one answer per case")
        for ((key, message), answer) in zip(cases, answers) {
            let digest = message.withUnsafeBytes { SHA256.hex(of: $0) }
            #expect(digest == answer[0], "SHA-256 of \(message.count) bytes")
            #expect(
                HMACSHA256.hex(key: key, message: message) == answer[1],
                "HMAC of \(message.count) bytes under a \(key.count)-byte key")
        }
    }
}
