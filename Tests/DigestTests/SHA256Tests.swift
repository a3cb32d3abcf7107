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
