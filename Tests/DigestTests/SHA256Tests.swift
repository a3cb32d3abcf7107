import Digest
import Testing

/// FIPS 180-4's examples (and NIST's long message), and a message fed in uneven pieces.
@Suite("SHA-256")
struct SHA256Tests {
    func hex(_ text: String) -> String { Array(text.utf8).withUnsafeBytes { SHA256.hex(of: $0) } }

    @Test func theStandardsExamples() {
        #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(
            hex(String(repeating: "a", count: 1_000_000))
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func piecesOfAnySizeGiveTheSameDigest() {
        let message = Array((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let whole = message.withUnsafeBytes { SHA256.hex(of: $0) }
        for piece in [1, 7, 63, 64, 65, 200] {
            var hash = SHA256()
            var start = 0
            while start < message.count {
                let end = min(start + piece, message.count)
                message[start..<end].withUnsafeBytes { hash.update($0) }
                start = end
            }
            let digest = hash.finish().map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            #expect(digest == whole, "pieces of \(piece)")
        }
    }
}

/// HMAC-SHA256 against RFC 4231's test cases (a short key, a key of text, a key longer than a block).
@Suite("HMAC-SHA256")
struct HMACSHA256Tests {
    @Test func theRFCsTestCases() {
        #expect(
            HMACSHA256.hex(key: [UInt8](repeating: 0x0B, count: 20), message: Array("Hi There".utf8))
                == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        #expect(
            HMACSHA256.hex(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(
            HMACSHA256.hex(
                key: [UInt8](repeating: 0xAA, count: 131),
                message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
