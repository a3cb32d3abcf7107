import CVips

/// libvips, started once per process (loaders narrowed to the five accepted formats, one thread
/// per decode, no cache: CVips/shim.h), and each `VipsImage` owned by one `DecodedImage`.
enum LibVips {
    /// Nil when libvips started (opened on this first use: CVips/shim.h); otherwise why not.
    static let startFailure: String? = {
        var failure = [CChar](repeating: 0, count: 512)
        guard cvips_start(&failure, failure.count) != 0 else { return nil }
        return String(decoding: failure.prefix { $0 != 0 }.map(UInt8.init(bitPattern:)), as: UTF8.self)
    }()

    /// libvips' messages since the last call, on one line (its buffer is the process's).
    static func takeError() -> String {
        guard let copy = cvips_take_error() else { return "libvips gave no reason" }
        defer { cvips_free(copy) }
        let text = String(cString: copy).split(whereSeparator: \.isNewline).joined(separator: "; ")
        return text.isEmpty ? "libvips gave no reason" : text
    }
}

/// A libvips image: the header of a file, or its pixels decoded into memory. Released with the object.
final class DecodedImage {
    /// A `VipsImage *` (opaque here: CVips/shim.h declares no more of it).
    let pointer: OpaquePointer

    private init(_ pointer: OpaquePointer) { self.pointer = pointer }

    deinit { cvips_release(pointer) }

    var width: Int { Int(cvips_width(pointer)) }
    var height: Int { Int(cvips_height(pointer)) }
    var orientation: Int { Int(cvips_orientation(pointer)) }
    var turnsSideways: Bool { cvips_turns_sideways(pointer) != 0 }

    /// The file's header, nothing decoded. `bytes` must stay alive as long as the image.
    static func header(of bytes: UnsafeRawBufferPointer) throws(LibVipsError) -> DecodedImage {
        guard let image = cvips_header(bytes.baseAddress, bytes.count) else { throw LibVipsError(LibVips.takeError()) }
        return DecodedImage(image)
    }

    /// The file decoded upright, in sRGB, at most `width` pixels wide.
    static func decode(_ bytes: UnsafeRawBufferPointer, width: Int) throws(LibVipsError) -> DecodedImage {
        guard let image = cvips_decode(bytes.baseAddress, bytes.count, Int32(width)) else {
            throw LibVipsError(LibVips.takeError())
        }
        return DecodedImage(image)
    }

    /// This image `width` pixels wide, as WebP without metadata: libvips 8.14 writes an Exif chunk
    /// even when told to strip (checked here: resolution, orientation and the EXIF version of the
    /// decoded original), so the chunks are removed again by `MetadataStripping`.
    func webp(width: Int, quality: Int) throws(LibVipsError) -> [UInt8] {
        var buffer: UnsafeMutableRawPointer?
        var length = 0
        guard cvips_webp_variant(pointer, Int32(width), Int32(quality), &buffer, &length) == 0, let buffer else {
            throw LibVipsError(LibVips.takeError())
        }
        defer { cvips_free(buffer) }
        let encoded = UnsafeRawBufferPointer(start: buffer, count: length)
        guard let stripped = MetadataStripping.stripped(encoded, format: .webp, orientation: 1) else {
            throw LibVipsError("libvips wrote a WebP file whose chunks cannot be followed")
        }
        return stripped
    }
}

/// What libvips said when it failed.
struct LibVipsError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
