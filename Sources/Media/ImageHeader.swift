/// An image's size in pixels as stored (before its orientation tag turns it).
public struct ImageSize: Sendable, Equatable {
    public let width: Int
    public let height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Width × height, or `Int.max` when that does not fit: a header may declare 4 billion by
    /// 4 billion (found by Fuzz/FuzzMediaUpload: the product trapped).
    public var pixels: Int {
        let (product, overflow) = width.multipliedReportingOverflow(by: height)
        return overflow ? Int.max : product
    }
}

/// The size an image file declares, read from its header without decoding anything: what the
/// pixel limit is checked against before a decoder allocates for it (a 40 KB PNG may declare
/// 20,000 × 20,000 pixels: a decompression bomb). Hand-written over `ByteReader`, fuzzed by
/// Fuzz/FuzzMediaUpload.
public enum ImageHeader {
    /// Nil when the header is missing, truncated, or declares a zero dimension.
    public static func size(of bytes: UnsafeRawBufferPointer, format: ImageFormat) -> ImageSize? {
        let reader = ByteReader(bytes)
        let size: ImageSize? =
            switch format {
            case .png: png(reader)
            case .gif: gif(reader)
            case .webp: webp(reader)
            case .jpeg: jpeg(reader)
            case .avif: avif(reader)
            }
        guard let size, size.width > 0, size.height > 0 else { return nil }
        return size
    }

    /// The IHDR chunk, which must come first (PNG §11.2.2).
    private static func png(_ reader: ByteReader) -> ImageSize? {
        guard reader.uint32BE(at: 8) == 13, reader.matches(Array("IHDR".utf8), at: 12),
            let width = reader.uint32BE(at: 16), let height = reader.uint32BE(at: 20)
        else { return nil }
        return ImageSize(width: Int(width), height: Int(height))
    }

    /// The logical screen: every frame is drawn on (and clipped to) it.
    private static func gif(_ reader: ByteReader) -> ImageSize? {
        guard let width = reader.uint16LE(at: 6), let height = reader.uint16LE(at: 8) else { return nil }
        return ImageSize(width: Int(width), height: Int(height))
    }

    /// The first chunk: VP8X (extended: the canvas), VP8L (lossless) or `VP8 ` (lossy).
    private static func webp(_ reader: ByteReader) -> ImageSize? {
        if reader.matches(Array("VP8X".utf8), at: 12) {
            guard let width = reader.uint24LE(at: 24), let height = reader.uint24LE(at: 27) else { return nil }
            return ImageSize(width: Int(width) + 1, height: Int(height) + 1)
        }
        if reader.matches(Array("VP8L".utf8), at: 12) {
            guard reader.byte(at: 20) == 0x2F, let bits = reader.uint32LE(at: 21) else { return nil }
            return ImageSize(width: Int(bits & 0x3FFF) + 1, height: Int((bits >> 14) & 0x3FFF) + 1)
        }
        if reader.matches(Array("VP8 ".utf8), at: 12) {
            guard reader.matches([0x9D, 0x01, 0x2A], at: 23), let width = reader.uint16LE(at: 26),
                let height = reader.uint16LE(at: 28)
            else { return nil }
            return ImageSize(width: Int(width & 0x3FFF), height: Int(height & 0x3FFF))
        }
        return nil
    }

    /// The first start-of-frame segment before the first scan.
    private static func jpeg(_ reader: ByteReader) -> ImageSize? {
        for segment in JPEGSegments(reader) {
            if segment.marker == 0xDA { return nil }  // a scan before any frame header
            if JPEGSegments.isStartOfFrame(segment.marker) {
                guard let height = reader.uint16BE(at: segment.contentStart + 1),
                    let width = reader.uint16BE(at: segment.contentStart + 3)
                else { return nil }
                return ImageSize(width: Int(width), height: Int(height))
            }
        }
        return nil
    }

    /// The largest `ispe` (image spatial extents) property of the file (`meta` › `iprp` › `ipco`):
    /// the primary image's, or a larger one's that a decoder might be asked for (a grid, an
    /// alpha plane), so the limit holds for whatever a decoder allocates.
    private static func avif(_ reader: ByteReader) -> ImageSize? {
        guard let top = ISOBox.list(in: reader, from: 0, to: reader.count),
            let meta = ISOBox.first("meta", in: top),
            let iprp = ISOBox.first("iprp", in: meta.children(in: reader, fullBox: true)),
            let ipco = ISOBox.first("ipco", in: iprp.children(in: reader)),
            let properties = ipco.children(in: reader)
        else { return nil }
        let extents = properties.filter { $0.type == "ispe" }.compactMap { box -> ImageSize? in
            guard let width = reader.uint32BE(at: box.contentStart + 4),
                let height = reader.uint32BE(at: box.contentStart + 8), box.contentStart + 12 <= box.end
            else { return nil }
            return ImageSize(width: Int(width), height: Int(height))
        }
        return extents.max { $0.pixels < $1.pixels }
    }
}
