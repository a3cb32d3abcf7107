import Carousel
import Definitions
import Foundation
import Store
import TestSupport
import Testing

@testable import BannerService

/// Banner images given as files beside the configuration (docs/CONFIGURATION.md, "Images beside
/// the file"): read and checked at launch, named by their library path, kept in an empty store.
@Suite("Images beside the configuration file")
struct LibraryFileTests {
    static let path = "config/carousel.json"

    /// `Launch.parse` over a configuration and the image files beside it.
    func parse(_ file: String, images: [String: [UInt8]]) throws(ConfigurationError) -> Launch {
        try Launch.parse(
            arguments: [], environment: [:], readFile: files([Self.path: file]),
            readImage: { images[$0].map(FileContents.contents) ?? .missing })
    }

    func error(_ file: String, images: [String: [UInt8]] = [:]) -> String? {
        do {
            _ = try parse(file, images: images)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func aRelativeImageIsReadAndNamedByItsLibraryPath() throws {
        let png = try MediaAPITests.fixture("quadrant.png")
        let id = MediaAPITests.sha256(png)
        let file = #"""
            {"carousels": [
              {"name": "lobby", "banners": [
                {"id": "a", "image": "banners/a.png"},
                {"id": "b", "image": "https://cdn.example.com/b.png"}]},
              {"name": "shop", "banners": [{"id": "again", "image": "banners/a.png"}]}]}
            """#
        guard case .run(let configuration, _) = try parse(file, images: ["config/banners/a.png": png]) else {
            Issue.record("expected .run")
            return
        }
        #expect(
            configuration.definitions.map { $0.banners.map(\.image) } == [
                ["/media/\(id)", "https://cdn.example.com/b.png"], ["/media/\(id)"],
            ])
        #expect(configuration.libraryFiles == [LibraryFile(path: "config/banners/a.png", id: id, bytes: png)])
    }

    @Test(arguments: [
        (
            "banners/a.png",
            #"banners[0].image: no image file config/banners/a.png (a path that is no URL is a file beside the configuration)"#
        ),
        ("notes.txt.jpg", #"banners[0].image: config/notes.txt.jpg is not an image the library takes: "#),
    ])
    func aMissingOrWrongFileNamesTheFieldAndThePath(_ image: String, _ message: String) {
        let text = Array("just some text, not an image".utf8)
        let found = error(#"{"banners": [{"id": "a", "image": "\#(image)"}]}"#, images: ["config/notes.txt.jpg": text])
        #expect(found?.hasPrefix("\(Self.path): \(message)") == true, "\(found ?? "no error")")
    }

    @Test(arguments: [
        ("banners/a.png", true), ("a.JPG", true), ("./a.webp", true), ("a.jpeg", true), ("a.gif", true),
        ("a.avif", true), ("/media/abc", false), ("https://cdn.example.com/a.png", false), ("not a url", false),
        ("a", false), (".png", false), ("my banner.png", false), ("", false),
    ])
    func onlyARelativePathNamedAsAnImageIsAFile(_ image: String, _ isFile: Bool) {
        #expect(LibraryFiles.isFilePath(image) == isFile)
    }

    /// Seeding keeps the image with its variants before the carousel that shows it; a restart over
    /// a seeded store does not bring back an image the operator deleted.
    @Test func anEmptyStoreIsGivenTheImagesOnlyOnce() throws {
        let jpeg = try MediaAPITests.fixture("wide.jpg")
        let id = MediaAPITests.sha256(jpeg)
        let image = LibraryFile(path: "config/banners/wide.jpg", id: id, bytes: jpeg)
        let lobby = CarouselDefinition(
            name: "lobby", interval: .seconds(10), autoplay: false,
            banners: [Banner(id: "a", image: "/media/\(id)"), Banner(id: "b", image: "https://cdn.example.com/b.png")])
        let store = MemoryStore()

        let first = try StoreSeeding.load(store, seeding: [lobby], images: [image], now: t0)
        #expect(first.seeded)
        let record = try #require(try store.mediaRecord(id))
        #expect(record.type == "image/jpeg" && record.width == 1000 && record.height == 750)
        #expect(record.variants.map(\.width) == [480, 960])
        #expect(try store.mediaBytes(of: id, .variant(width: 480))?.prefix(4) == Array("RIFF".utf8)[...])

        let edited = CarouselDefinition(
            name: "lobby", interval: .seconds(10), autoplay: false,
            banners: [Banner(id: "b", image: "https://cdn.example.com/b.png")])
        try StoreSeeding.importDefinitions([edited], into: store, now: t0)
        #expect(try store.deleteMedia(id, by: Attribution(actor: "admin", at: t0)) == .deleted)
        _ = try StoreSeeding.load(store, seeding: [lobby], images: [image], now: t0)
        #expect(try store.mediaRecord(id) == nil)
        try StoreSeeding.importDefinitions([lobby], images: [image], into: store, now: t0)
        #expect(try store.mediaRecord(id) != nil, "banner-server import brings the images its file names")
    }

    @Test func anImageThatDoesNotDecodeMakesTheStoreUnusableNamingTheFile() throws {
        var png = try MediaAPITests.fixture("quadrant.png")
        png.replaceSubrange(40..<png.count, with: [UInt8](repeating: 0, count: png.count - 40))
        let image = LibraryFile(path: "config/banners/broken.png", id: MediaAPITests.sha256(png), bytes: png)
        let lobby = CarouselDefinition(
            name: "lobby", interval: .seconds(10), autoplay: false,
            banners: [Banner(id: "a", image: "/media/\(image.id)")])
        let store = MemoryStore()
        #expect {
            try StoreSeeding.load(store, seeding: [lobby], images: [image], now: t0)
        } throws: { error in
            guard case StoreError.unusable(let message) = error else { return false }
            return message.hasPrefix("config/banners/broken.png: ")
                && message.hasSuffix("; give the configuration an image the library takes")
        }
        #expect(try store.loadAll().isEmpty)
    }

    /// The shipped configuration shows the images shipped beside it (config/banners/).
    @Test func theShippedConfigurationShowsItsOwnImages() throws {
        let path = repositoryFile("config/carousel.json")
        guard
            case .run(let configuration, _) = try Launch.parse(
                arguments: ["--config", path], environment: [:])
        else {
            Issue.record("expected .run")
            return
        }
        #expect(configuration.libraryFiles.count == 5)
        #expect(configuration.banners.map(\.image) == configuration.libraryFiles.map { "/media/\($0.id)" })
        #expect(configuration.libraryFiles.allSatisfy { $0.path.hasSuffix(".jpg") && $0.bytes.count < 200_000 })
    }
}
