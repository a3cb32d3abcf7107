import Definitions
import Digest

/// Limits on an upload (docs/MEDIA.md): checked before the work they bound.
public struct MediaLimits: Sendable, Equatable {
    /// Bytes of one file (`mediaMaxBytes`): the body is refused before it is read past this.
    public var maxBytes: Int
    /// Pixels the file's header may declare (`mediaMaxPixels`): checked before any decoding.
    public var maxPixels: Int

    public init(maxBytes: Int = 10 * 1024 * 1024, maxPixels: Int = 40_000_000) {
        self.maxBytes = maxBytes
        self.maxPixels = maxPixels
    }
}

/// An uploaded image ready to store: the original without its metadata and the WebP variants.
public struct ProcessedImage: Sendable, Equatable {
    /// The SHA-256 of the bytes as uploaded (hex): the same file uploaded twice is one image.
    public let id: String
    public let format: ImageFormat
    /// Upright (its orientation tag applied), as it is shown.
    public let width: Int
    public let height: Int
    /// The original as uploaded, its metadata removed (`MetadataStripping`).
    public let original: [UInt8]
    public let variants: [Variant]

    public struct Variant: Sendable, Equatable {
        public let width: Int
        public let webp: [UInt8]
    }
}

/// Why an upload is refused; `status` is the HTTP answer (docs/MEDIA.md).
public enum MediaRefusal: Error, Sendable, Equatable {
    /// 415: not one of the five formats, or not the format its Content-Type says.
    case unsupportedType(String)
    /// 422: a file of an accepted format that cannot be read whole.
    case undecodable(String)
    /// 422: more pixels than `mediaMaxPixels`, found in the header.
    case tooManyPixels(ImageSize, limit: Int)
    /// 413: more bytes than `mediaMaxBytes`.
    case tooLarge(Int, limit: Int)

    public var status: Int {
        switch self {
        case .unsupportedType: 415
        case .undecodable, .tooManyPixels: 422
        case .tooLarge: 413
        }
    }

    public var message: String {
        switch self {
        case .unsupportedType(let detail): detail
        case .undecodable(let detail): detail
        case .tooManyPixels(let size, let limit):
            "the image declares \(size.width) × \(size.height) pixels, more than the limit of \(limit) "
                + "(mediaMaxPixels); scale it down before uploading"
        case .tooLarge(let bytes, let limit):
            "the file has \(bytes) bytes, over the limit of \(limit) (mediaMaxBytes)"
        }
    }
}

/// An upload's journey from bytes to `ProcessedImage` (docs/MEDIA.md): the format from the
/// signature, the size from the header and the limits — all before libvips decodes a pixel —
/// then one decode, the variants, and the original stripped of its metadata.
public enum MediaProcessing {
    /// The widths of the WebP variants, none wider than the original.
    public static let variantWidths = MediaReference.variantWidths
    /// WebP quality of the variants: photographs look as the original at a third of JPEG's bytes.
    static let webpQuality = 80

    /// Nil when libvips can be used; otherwise why not (the service then refuses uploads).
    public static var unavailable: String? { LibVips.startFailure }

    /// The checks that cost nothing: size, signature, the Content-Type's agreement, the header's
    /// pixel count. Returns the format and the declared size.
    public static func check(
        _ bytes: UnsafeRawBufferPointer, declaredType: String?, limits: MediaLimits
    ) throws(MediaRefusal) -> (ImageFormat, ImageSize) {
        guard bytes.count <= limits.maxBytes else { throw .tooLarge(bytes.count, limit: limits.maxBytes) }
        guard let format = ImageFormat.sniff(bytes) else {
            throw .unsupportedType(
                "the file is \(ImageFormat.describe(bytes)); upload a JPEG, PNG, WebP, GIF or AVIF image")
        }
        if let declaredType, let declared = ImageFormat(mediaType: declaredType), declared != format {
            throw .unsupportedType(
                "the file is a \(format.rawValue.uppercased()) image but its Content-Type says \(declaredType); "
                    + "send it as \(format.mediaType)")
        }
        guard let size = ImageHeader.size(of: bytes, format: format) else {
            throw .undecodable(
                "the \(format.rawValue.uppercased()) header cannot be read (a truncated or corrupt file)")
        }
        guard size.pixels <= limits.maxPixels else { throw .tooManyPixels(size, limit: limits.maxPixels) }
        return (format, size)
    }

    /// Everything: `check`, then libvips. Slow (a 12-megapixel photo takes most of a second of one
    /// core): call it off the request threads, a bounded number at once (`DecodeQueue`). `id` is
    /// the bytes' SHA-256 when the caller has it already (10 MiB are not hashed twice).
    public static func process(
        _ bytes: [UInt8], declaredType: String?, limits: MediaLimits, id: String? = nil
    ) throws(MediaRefusal) -> ProcessedImage {
        if let failure = LibVips.startFailure { throw .undecodable("images cannot be decoded here: \(failure)") }
        let outcome = bytes.withUnsafeBytes { raw in
            Result { () throws(MediaRefusal) in
                try process(raw, declaredType: declaredType, limits: limits, id: id ?? SHA256.hex(of: raw))
            }
        }
        return try outcome.get()
    }

    private static func process(
        _ raw: UnsafeRawBufferPointer, declaredType: String?, limits: MediaLimits, id: String
    ) throws(MediaRefusal) -> ProcessedImage {
        let (format, _) = try check(raw, declaredType: declaredType, limits: limits)
        do {
            let header = try DecodedImage.header(of: raw)
            // libvips' own reading of the header must agree with the limit too: it is what allocates.
            let declared = ImageSize(width: header.width, height: header.height)
            guard declared.pixels <= limits.maxPixels else {
                throw MediaRefusal.tooManyPixels(declared, limit: limits.maxPixels)
            }
            let upright = header.turnsSideways ? ImageSize(width: declared.height, height: declared.width) : declared
            let widths = variantWidths.filter { $0 <= upright.width }
            let largest = widths.last ?? upright.width
            let decoded = try DecodedImage.decode(raw, width: largest)
            let variants = try widths.map { (width) throws(LibVipsError) in
                ProcessedImage.Variant(width: width, webp: try decoded.webp(width: width, quality: webpQuality))
            }
            guard let original = MetadataStripping.stripped(raw, format: format, orientation: header.orientation)
            else {
                throw MediaRefusal.undecodable(
                    "the \(format.rawValue.uppercased()) file's structure cannot be followed to its end")
            }
            return ProcessedImage(
                id: id, format: format, width: upright.width, height: upright.height, original: original,
                variants: variants)
        } catch let refusal as MediaRefusal {
            throw refusal
        } catch let failure as LibVipsError {
            throw .undecodable("the \(format.rawValue.uppercased()) file cannot be decoded: \(failure.message)")
        } catch {
            throw .undecodable("\(error)")
        }
    }
}
