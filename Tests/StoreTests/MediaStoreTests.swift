import Store
import Testing
import TimeZones

/// The media library's rows (docs/MEDIA.md), the same on every store: an image and its files
/// stored once, listed, read back byte for byte, deleted.
@Suite("Store contract: media")
struct MediaStoreTests {
    /// Bytes of every value, and a few hundred KB: a blob is not a text.
    func bytes(_ seed: UInt8, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ Int(seed)) }
    }

    func image(_ id: String, at offset: Int64) -> NewMedia {
        NewMedia(
            id: id, type: "image/jpeg", width: 1000, height: 750, original: bytes(1, count: 300_000) + [0, 0xFF],
            variants: [(960, bytes(2, count: 40_000)), (480, bytes(3, count: 9_000))], createdAt: t0 + .seconds(offset))
    }

    @Test(arguments: StoreKind.allCases)
    func anImageIsStoredOnceAndReadBackByteForByte(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        let first = image(String(repeating: "a", count: 64), at: 10)
        let second = image(String(repeating: "b", count: 64), at: 5)
        #expect(try store.saveMedia(first))
        #expect(try store.saveMedia(second))
        #expect(try !store.saveMedia(first), "the same id again stores nothing")
        let records = try store.mediaRecords()
        #expect(records.map(\.id) == [second.id, first.id], "oldest first")
        #expect(records.last == first.record)
        #expect(
            records.last?.variants == [.init(width: 480, bytes: 9_000), .init(width: 960, bytes: 40_000)],
            "narrowest first")
        #expect(try store.mediaRecord(first.id) == first.record)
        #expect(try store.mediaRecord(String(repeating: "c", count: 64)) == nil)
        #expect(try store.mediaBytes(of: first.id, .original) == first.original)
        #expect(try store.mediaBytes(of: first.id, .variant(width: 960)) == first.variants[1].webp)
        #expect(try store.mediaBytes(of: first.id, .variant(width: 1600)) == nil)
        #expect(try store.mediaBytes(of: "c", .original) == nil)

        #expect(try store.deleteMedia(first.id))
        #expect(try !store.deleteMedia(first.id))
        #expect(try store.mediaRecords().map(\.id) == [second.id])
        #expect(try store.mediaBytes(of: first.id, .original) == nil)
        #expect(try store.mediaBytes(of: first.id, .variant(width: 480)) == nil)
        #expect(try store.saveMedia(first), "stored again after its deletion")
    }
}
