import Digest
import Media
import Testing

/// An upload's way from bytes to an image to store (docs/MEDIA.md): formats by signature, limits
/// before decoding, variants, metadata gone, orientation applied — each checked by decoding what
/// comes out with libvips' command-line tools, not with the code under test.
@Suite("Media processing")
struct MediaProcessingTests {
    let limits = MediaLimits()

    func process(_ bytes: [UInt8], type: String? = nil, limits: MediaLimits? = nil) throws(MediaRefusal)
        -> ProcessedImage
    {
        try MediaProcessing.process(bytes, declaredType: type, limits: limits ?? self.limits)
    }

    func refusal(_ bytes: [UInt8], type: String? = nil, limits: MediaLimits? = nil) -> MediaRefusal? {
        do {
            _ = try process(bytes, type: type, limits: limits)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: ImageFormat.allCases)
    func eachFormatIsToldByItsBytesAndKeptWhole(_ format: ImageFormat) async throws {
        let bytes = try Fixtures.quadrant(format)
        #expect(bytes.withUnsafeBytes { ImageFormat.sniff($0) } == format)
        #expect(bytes.withUnsafeBytes { ImageHeader.size(of: $0, format: format) } == ImageSize(width: 80, height: 60))
        let image = try process(bytes, type: format.mediaType)
        #expect(image.id == bytes.withUnsafeBytes { SHA256.hex(of: $0) })
        #expect((image.format, image.width, image.height) == (format, 80, 60))
        #expect(image.variants.isEmpty, "no variant wider than the original")
        let suffix = format == .jpeg ? "jpg" : format.rawValue
        #expect(Inspect.isRed(try await Inspect.pixel(image.original, x: 5, y: 5, suffix: suffix)))
        #expect(Inspect.isWhite(try await Inspect.pixel(image.original, x: 70, y: 50, suffix: suffix)))
    }

    @Test func variantsAreWebPAtTheFixedWidthsNoWiderThanTheOriginal() async throws {
        let image = try process(try Fixtures.bytes("wide.jpg"))
        #expect((image.width, image.height) == (1000, 750))
        #expect(image.variants.map(\.width) == [480, 960])
        for variant in image.variants {
            #expect(variant.webp.withUnsafeBytes { ImageFormat.sniff($0) } == .webp)
            let size = variant.webp.withUnsafeBytes { ImageHeader.size(of: $0, format: .webp) }
            #expect(size == ImageSize(width: variant.width, height: variant.width * 3 / 4))
            let header = try await Inspect.header(variant.webp, suffix: "webp")
            #expect(header.contains("width: \(variant.width)"))
            #expect(
                Inspect.isRed(
                    try await Inspect.pixel(variant.webp, x: variant.width / 8, y: variant.width / 16, suffix: "webp")))
            #expect(
                Inspect.isWhite(try await Inspect.pixel(variant.webp, x: variant.width * 7 / 8, y: 10, suffix: "webp")))
        }
    }

    /// A phone's photo, held sideways (orientation 6: turn a quarter clockwise to show it), with
    /// its position in Exif's GPS block, in XMP and in a comment.
    @Test func aPhonesPhotoLosesItsPlaceAndShowsUpright() async throws {
        let photo = try Fixtures.phonePhoto(orientation: 6)
        #expect(photo.containsBytes(of: Fixtures.secretPlace))
        let image = try process(photo, type: "image/jpeg")
        #expect((image.width, image.height) == (750, 1000), "upright: the quarter turn swaps the sides")
        #expect(image.variants.map(\.width) == [480])
        // The original: no GPS, no XMP, no comment — but still its orientation, alone.
        for secret in [Fixtures.secretPlace, Fixtures.secretComment, "http://ns.adobe.com/xap"] {
            #expect(!image.original.containsBytes(of: secret), "\(secret) left in the original")
        }
        let originalHeader = try await Inspect.header(image.original, suffix: "jpg")
        #expect(originalHeader.contains("orientation: 6"))
        #expect(!originalHeader.contains("GPS"))
        // After the turn, the red quarter is at the top right.
        let variant = try #require(image.variants.first).webp
        #expect(!variant.containsBytes(of: Fixtures.secretPlace) && !variant.containsBytes(of: "Exif"))
        let header = try await Inspect.header(variant, suffix: "webp")
        #expect(header.contains("width: 480") && header.contains("height: 640"))
        #expect(!header.contains("exif-data") && !header.contains("xmp-data"))
        #expect(Inspect.isRed(try await Inspect.pixel(variant, x: 440, y: 40, suffix: "webp")))
        #expect(Inspect.isWhite(try await Inspect.pixel(variant, x: 40, y: 40, suffix: "webp")))
        #expect(Inspect.isWhite(try await Inspect.pixel(variant, x: 440, y: 600, suffix: "webp")))
    }

    @Test func theSameBytesAreTheSameID() throws {
        let bytes = try Fixtures.bytes("wide.jpg")
        #expect(try process(bytes).id == (try process(bytes)).id)
        #expect(try process(bytes).id != (try process(Fixtures.phonePhoto(orientation: 1))).id)
    }

    @Test func whatIsNotAnAcceptedImageIs415() throws {
        let svg = Array(
            "<?xml version=\"1.0\"?><svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".utf8)
        let heic = [0, 0, 0, 24] + Array("ftypheic\0\0\0\0mif1heic".utf8)
        for (bytes, words) in [
            (svg, "SVG"), (heic, "HEIC"), (Array("hello".utf8), "not a JPEG"), ([], "empty"),
            (Array("%PDF-1.7\n".utf8), "not a JPEG"),
        ] {
            let refused = refusal(bytes)
            #expect(refused?.status == 415)
            #expect(refused?.message.contains(words) == true, "\(String(describing: refused))")
        }
        // The bytes decide; a Content-Type that disagrees is refused, naming both.
        let refused = refusal(try Fixtures.quadrant(.png), type: "image/jpeg")
        #expect(refused?.status == 415)
        #expect(refused?.message.contains("PNG") == true && refused?.message.contains("image/jpeg") == true)
    }

    /// Headers that declare 20,000 × 20,000 pixels in a few dozen bytes: refused from the header,
    /// before libvips is asked (a decoder would allocate 1.6 GB for them).
    @Test func decompressionBombsAreRefusedFromTheirHeader() throws {
        var png = try Fixtures.quadrant(.png)
        png.replaceSubrange(16..<24, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        var jpeg = try Fixtures.quadrant(.jpeg)
        let sof = try #require((0..<(jpeg.count - 1)).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 })
        jpeg.replaceSubrange((sof + 5)..<(sof + 9), with: [0x4E, 0x20, 0x4E, 0x20])
        var gif = try Fixtures.quadrant(.gif)
        gif.replaceSubrange(6..<10, with: [0x20, 0x4E, 0x20, 0x4E])
        for bomb in [png, jpeg, gif] {
            let refused = refusal(bomb)
            #expect(refused == .tooManyPixels(ImageSize(width: 20_000, height: 20_000), limit: 40_000_000))
            #expect(refused?.status == 422)
            #expect(refused?.message.contains("20000 × 20000") == true)
        }
        // A header declaring more pixels than a machine word holds is refused, not a crash.
        var huge = try Fixtures.quadrant(.png)
        huge.replaceSubrange(16..<24, with: [0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xBC, 0xBC])
        #expect(refusal(huge)?.status == 422)
        // The limit is a setting.
        #expect(refusal(try Fixtures.bytes("wide.jpg"), limits: MediaLimits(maxPixels: 749_999))?.status == 422)
        #expect(refusal(try Fixtures.bytes("wide.jpg"), limits: MediaLimits(maxPixels: 750_000)) == nil)
        #expect(refusal(try Fixtures.bytes("wide.jpg"), limits: MediaLimits(maxBytes: 1000))?.status == 413)
    }

    @Test(arguments: ImageFormat.allCases)
    func truncatedAndCorruptFilesAre422(_ format: ImageFormat) throws {
        let bytes = try Fixtures.quadrant(format)
        for cut in [12, 30, bytes.count / 2, bytes.count - 8] {
            let refused = refusal(Array(bytes[0..<cut]))
            #expect(
                refused?.status == 422 || refused?.status == 415,
                "\(format) cut at \(cut): \(String(describing: refused))")
        }
        var scrambled = bytes
        for index in stride(from: bytes.count / 3, to: bytes.count, by: 3) { scrambled[index] ^= 0x5A }
        let refused = refusal(scrambled)
        #expect(refused?.status == 422, "\(format) scrambled: \(String(describing: refused))")
    }

    /// A file that is two things at once: an image for the signature, something else after it.
    /// What follows the image's end is not served.
    @Test func whatFollowsAnImagesEndIsDropped() throws {
        let script = "<script>alert(document.cookie)</script>"
        for format in [ImageFormat.png, .jpeg, .gif] {
            let polyglot = try Fixtures.quadrant(format) + Array(script.utf8)
            let image = try process(polyglot)
            #expect(!image.original.containsBytes(of: script), "\(format)")
            #expect(image.original == (try process(Fixtures.quadrant(format))).original)
        }
        // An image signature in front of markup that is no image at all.
        let fake = [0xFF, 0xD8, 0xFF, 0xE0] + Array("<svg onload=alert(1)>".utf8)
        #expect(refusal(fake)?.status == 422)
    }
}
