/// The image formats the service accepts (docs/MEDIA.md), told by their first bytes — never by
/// a file name or a Content-Type, which the sender chooses.
public enum ImageFormat: String, Sendable, CaseIterable {
    case jpeg, png, webp, gif, avif

    /// The media type the service answers the original with.
    public var mediaType: String { "image/\(rawValue)" }

    /// The format `bytes` are in, or nil when they are in none of the five (SVG, HEIC, text…).
    public static func sniff(_ bytes: UnsafeRawBufferPointer) -> ImageFormat? {
        let reader = ByteReader(bytes)
        if reader.matches([0xFF, 0xD8, 0xFF], at: 0) { return .jpeg }
        if reader.matches([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], at: 0) { return .png }
        if reader.matches(Array("GIF87a".utf8), at: 0) || reader.matches(Array("GIF89a".utf8), at: 0) { return .gif }
        if reader.matches(Array("RIFF".utf8), at: 0) && reader.matches(Array("WEBP".utf8), at: 8) { return .webp }
        if isAVIF(reader) { return .avif }
        return nil
    }

    /// An ISO base media file whose `ftyp` box names `avif` or `avis` (still image or sequence)
    /// as its major or a compatible brand. HEIC shares the container but not the brands.
    private static func isAVIF(_ reader: ByteReader) -> Bool {
        guard reader.matches(Array("ftyp".utf8), at: 4), let size = reader.uint32BE(at: 0).map(Int.init),
            size >= 16, size <= reader.count
        else { return false }
        let brands = stride(from: 8, to: size - 3, by: 4).filter { $0 != 12 }  // 12: the minor version
        return brands.contains {
            reader.matches(Array("avif".utf8), at: $0) || reader.matches(Array("avis".utf8), at: $0)
        }
    }

    /// The format a media type names (`image/png`), nil for any other type.
    public init?(mediaType: String) {
        guard let format = Self.allCases.first(where: { $0.mediaType == mediaType.lowercased() }) else { return nil }
        self = format
    }

    /// What the bytes look like when they are not an accepted image, for the refusal's message.
    public static func describe(_ bytes: UnsafeRawBufferPointer) -> String {
        let reader = ByteReader(bytes)
        var start = 0
        while let byte = reader.byte(at: start), [0x20, 0x09, 0x0A, 0x0D, 0xEF, 0xBB, 0xBF].contains(byte) {
            start += 1
        }
        if reader.matches(Array("<".utf8), at: start) {
            return "markup (SVG or HTML), which is refused: an SVG can carry scripts"
        }
        if reader.matches(Array("ftyp".utf8), at: 4) { return "an ISO media file that is not AVIF (HEIC? convert it)" }
        return bytes.isEmpty ? "empty" : "not a JPEG, PNG, WebP, GIF or AVIF image"
    }
}
