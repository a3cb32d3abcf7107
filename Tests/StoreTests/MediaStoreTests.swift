import Carousel
import Definitions
import Store
import TestSupport
import Testing
import TimeZones

@testable import PostgresStore

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
        #expect(try store.saveMedia(first, by: byTests))
        #expect(try store.saveMedia(second, by: byTests))
        #expect(try !store.saveMedia(first, by: byTests), "the same id again stores nothing")
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

        #expect(try store.deleteMedia(first.id, by: byTests) == .deleted)
        #expect(try store.deleteMedia(first.id, by: byTests) == .notFound)
        #expect(try store.mediaRecords().map(\.id) == [second.id])
        #expect(try store.mediaBytes(of: first.id, .original) == nil)
        #expect(try store.mediaBytes(of: first.id, .variant(width: 480)) == nil)
        #expect(try store.saveMedia(first, by: byTests), "stored again after its deletion")
    }

    let shown = String(repeating: "d", count: 64)
    let absent = String(repeating: "e", count: 64)

    func carousel(_ name: String, images: [String]) -> CarouselDefinition {
        CarouselDefinition(
            name: name, banners: images.enumerated().map { Banner(id: "\(name)-\($0)", image: $1) })
    }

    /// A deletion reads the stored definitions in its transaction: an image a banner shows, by
    /// any of its URLs, stays, and the answer names every banner showing it.
    @Test(arguments: StoreKind.allCases)
    func anImageAStoredBannerShowsIsNotDeleted(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        #expect(try store.saveMedia(image(shown, at: 0), by: byTests))
        _ = try store.create(
            carousel("lobby", images: ["https://cdn.example.com/a.png", "/media/\(shown)/960.webp"]), anchor: playing,
            by: byTests)
        let hall = try store.create(
            carousel("hall", images: ["https://screens.example.com/media/\(shown)"]), anchor: playing, by: byTests)
        #expect(
            try store.deleteMedia(shown, by: byTests)
                == .inUse([
                    MediaUse(carousel: "hall", banner: "hall-0"), MediaUse(carousel: "lobby", banner: "lobby-1"),
                ]))
        #expect(try store.mediaRecord(shown) != nil)

        _ = try store.modify(hall.key, .admin(byTests)) { stored in
            StoredCarousel(
                definition: carousel("hall", images: []), revision: stored.revision + 1, anchor: stored.anchor,
                serial: stored.serial
            ).unaudited
        }
        #expect(try store.deleteMedia(shown, by: byTests) == .inUse([MediaUse(carousel: "lobby", banner: "lobby-1")]))
        #expect(try store.deleteMedia(absent, by: byTests) == .notFound)
    }

    /// A write checks, in its transaction, that the library images it brings in are stored;
    /// those the carousel showed before are not asked for again (a seeded carousel naming a
    /// missing image can still be edited).
    @Test(arguments: StoreKind.allCases)
    func aWriteBringingInAnImageTheLibraryLacksChangesNothing(_ kind: StoreKind) async throws {
        let store = try await kind.make()
        #expect(try store.saveMedia(image(shown, at: 0), by: byTests))
        #expect(throws: StoreError.missingMedia([absent])) {
            try store.create(
                carousel("lobby", images: ["/media/\(shown)", "/media/\(absent)"]), anchor: playing, by: byTests)
        }
        #expect(try store.loadAll().isEmpty)
        let lobby = try store.create(carousel("lobby", images: ["/media/\(shown)"]), anchor: playing, by: byTests)
        #expect(throws: StoreError.missingMedia([absent])) {
            try store.modify(lobby.key, .admin(byTests)) { stored in
                StoredCarousel(
                    definition: carousel("lobby", images: ["/media/\(shown)", "/media/\(absent)/480.webp"]),
                    revision: stored.revision + 1, anchor: stored.anchor, serial: stored.serial
                ).unaudited
            }
        }
        #expect(try store.loadAll() == [lobby])

        let seeded = try await kind.make()
        #expect(
            try seeded.seed([carousel("hall", images: ["/media/\(absent)"])], anchor: { _ in playing }, by: byTests))
        let hall = try #require(try seeded.load(named: "hall"))
        var edited = carousel("hall", images: ["/media/\(absent)"])
        edited.interval = .seconds(9)
        let written = try seeded.modify(hall.key, .admin(byTests)) { stored in
            StoredCarousel(
                definition: edited, revision: stored.revision + 1, anchor: stored.anchor, serial: stored.serial
            ).unaudited
        }
        #expect(written.definition == edited)
    }

    /// Two replicas: one deletes the image while the other's write bringing it in is under way
    /// (between the write's reading of its row and its writing). The deletion sees no use and
    /// commits; the write then finds the image gone and stores nothing. No banner is left naming
    /// an image the library lacks.
    @Test func onPostgreSQLADeletionDuringAWriteBringingTheImageInLeavesNoBannerWithoutIt() async throws {
        let (writer, deleter) = try await offThePool { [uri = try await PostgresServer.shared().createDatabase()] in
            (try PostgresStore(uri: uri), try PostgresStore(uri: uri))
        }
        #expect(try writer.saveMedia(image(shown, at: 0), by: byTests))
        let lobby = try writer.create(carousel("lobby", images: []), anchor: playing, by: byTests)
        var deletion: MediaDeletion?
        #expect(throws: StoreError.missingMedia([shown])) {
            try writer.modify(lobby.key, .admin(byTests)) { stored in
                if deletion == nil { deletion = try? deleter.deleteMedia(shown, by: byTests) }
                return StoredCarousel(
                    definition: carousel("lobby", images: ["/media/\(shown)"]), revision: stored.revision + 1,
                    anchor: stored.anchor, serial: stored.serial
                ).unaudited
            }
        }
        #expect(deletion == .deleted)
        #expect(try deleter.load(named: "lobby") == lobby)
        #expect(try deleter.mediaRecord(shown) == nil)
    }
}
