/// Removes what a camera or an editor wrote about a picture — EXIF (GPS position, camera, time),
/// XMP, IPTC, comments — from an original without decoding it: the pixels stay byte for byte as
/// uploaded, so `GET /media/ID` is the operator's file less its metadata (docs/MEDIA.md). Colour
/// profiles (ICC) and animation stay. A JPEG turned by its orientation tag keeps that tag alone,
/// in an Exif block of one entry, so it shows upright as before. Hand-written over `ByteReader`,
/// fuzzed by Fuzz/FuzzMediaUpload.
public enum MetadataStripping {
    /// The file without metadata; nil when its structure cannot be followed to its end marker.
    public static func stripped(_ bytes: UnsafeRawBufferPointer, format: ImageFormat, orientation: Int) -> [UInt8]? {
        let reader = ByteReader(bytes)
        switch format {
        case .jpeg: return jpeg(reader, orientation: orientation)
        case .png: return png(reader)
        case .webp: return webp(reader)
        case .gif: return gif(reader)
        case .avif: return avif(reader)
        }
    }

    // MARK: JPEG

    private static func jpeg(_ reader: ByteReader, orientation: Int) -> [UInt8]? {
        var output: [UInt8] = [0xFF, 0xD8]
        output.reserveCapacity(reader.count)
        var offset = 2
        var wroteOrientation = !(2...8).contains(orientation)
        while true {
            guard reader.byte(at: offset) == 0xFF else { return nil }
            var markerOffset = offset + 1
            while reader.byte(at: markerOffset) == 0xFF { markerOffset += 1 }
            guard let marker = reader.byte(at: markerOffset), marker != 0x00 else { return nil }
            if marker == 0xD9 {  // end of image: whatever follows (another picture, a trailer) is dropped
                output += [0xFF, 0xD9]
                return output
            }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 {  // no length
                output += [0xFF, marker]
                offset = markerOffset + 1
                continue
            }
            guard let length = reader.uint16BE(at: markerOffset + 1), length >= 2 else { return nil }
            let end = markerOffset + 1 + Int(length)
            guard end <= reader.count else { return nil }
            if !wroteOrientation && marker != 0xE0 {
                output += orientationExif(orientation)
                wroteOrientation = true
            }
            if keepsJPEGSegment(marker, reader: reader, contentStart: markerOffset + 3, end: end) {
                output += [0xFF, marker]
                output.append(contentsOf: reader.bytes[(markerOffset + 1)..<end])
            }
            offset = end
            if marker == 0xDA {  // entropy-coded data, up to the next marker that is not a restart
                let dataEnd = entropyDataEnd(reader, from: end)
                output.append(contentsOf: reader.bytes[end..<dataEnd])
                guard dataEnd < reader.count else { return nil }  // no end-of-image marker
                offset = dataEnd
            }
        }
    }

    /// APP0 (JFIF), APP2 when it holds an ICC profile, APP14 (Adobe: how to read the colours), and
    /// every segment that is not application data or a comment.
    private static func keepsJPEGSegment(_ marker: UInt8, reader: ByteReader, contentStart: Int, end: Int) -> Bool {
        switch marker {
        case 0xE0, 0xEE: true
        case 0xE2: reader.matches(Array("ICC_PROFILE\0".utf8), at: contentStart)
        case 0xE1...0xEF, 0xFE: false
        default: true
        }
    }

    private static func entropyDataEnd(_ reader: ByteReader, from start: Int) -> Int {
        var index = start
        while index + 1 < reader.count {
            if reader.bytes[index] == 0xFF {
                let next = reader.bytes[index + 1]
                if next != 0x00 && next != 0xFF && !(0xD0...0xD7).contains(next) { return index }
            }
            index += 1
        }
        return reader.count
    }

    /// APP1 `Exif` holding a TIFF structure of one entry: Orientation (0x0112, SHORT).
    static func orientationExif(_ orientation: Int) -> [UInt8] {
        let tiff: [UInt8] =
            [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]  // big-endian, IFD0 at 8
            + [0x00, 0x01]  // one entry
            + [0x01, 0x12, 0x00, 0x03, 0, 0, 0, 1, 0, UInt8(orientation), 0, 0]
            + [0, 0, 0, 0]  // no next IFD
        let content = Array("Exif\0\0".utf8) + tiff
        let length = content.count + 2
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + content
    }

    // MARK: PNG

    /// Every chunk but text (tEXt, zTXt, iTXt: XMP lives there), eXIf and tIME, up to IEND.
    private static func png(_ reader: ByteReader) -> [UInt8]? {
        var output = Array(reader.bytes[0..<min(8, reader.count)])
        var offset = 8
        while let length = reader.uint32BE(at: offset) {
            let end = offset + 12 + Int(length)
            guard end <= reader.count else { return nil }
            let type = String(decoding: reader.bytes[(offset + 4)..<(offset + 8)], as: UTF8.self)
            if !["tEXt", "zTXt", "iTXt", "eXIf", "tIME"].contains(type) {
                output.append(contentsOf: reader.bytes[offset..<end])
            }
            if type == "IEND" { return output }
            offset = end
        }
        return nil
    }

    // MARK: WebP

    /// Every chunk but EXIF and XMP, with the extended header's flags for them cleared and the
    /// RIFF size written again.
    private static func webp(_ reader: ByteReader) -> [UInt8]? {
        guard let riffSize = reader.uint32LE(at: 4), Int(riffSize) + 8 <= reader.count, riffSize >= 4 else {
            return nil
        }
        let end = Int(riffSize) + 8
        var output = Array(reader.bytes[0..<12])
        var offset = 12
        while offset < end {
            guard let size = reader.uint32LE(at: offset + 4) else { return nil }
            let chunkEnd = offset + 8 + Int(size) + Int(size & 1)
            guard chunkEnd <= end || (chunkEnd == end + 1 && size & 1 == 1) else { return nil }
            let fourCC = String(decoding: reader.bytes[offset..<(offset + 4)], as: UTF8.self)
            if fourCC != "EXIF" && fourCC != "XMP " {
                let start = output.count
                output.append(contentsOf: reader.bytes[offset..<min(chunkEnd, end)])
                if chunkEnd > end { output.append(0) }
                if fourCC == "VP8X" && size >= 1 { output[start + 8] &= ~UInt8(0x08 | 0x04) }
            }
            offset = chunkEnd
        }
        let newSize = UInt32(output.count - 8)
        for index in 0..<4 { output[4 + index] = UInt8((newSize >> (8 * UInt32(index))) & 0xFF) }
        return output
    }

    // MARK: GIF

    /// Every block but comments and application extensions other than looping (NETSCAPE2.0,
    /// ANIMEXTS1.0), up to the trailer.
    private static func gif(_ reader: ByteReader) -> [UInt8]? {
        guard let flags = reader.byte(at: 10) else { return nil }
        var offset = 13 + (flags & 0x80 != 0 ? 3 << (Int(flags & 0x07) + 1) : 0)
        guard offset <= reader.count else { return nil }
        var output = Array(reader.bytes[0..<offset])
        while let introducer = reader.byte(at: offset) {
            switch introducer {
            case 0x3B:
                output.append(0x3B)
                return output
            case 0x2C:
                guard let imageFlags = reader.byte(at: offset + 9) else { return nil }
                let dataStart = offset + 10 + (imageFlags & 0x80 != 0 ? 3 << (Int(imageFlags & 0x07) + 1) : 0) + 1
                guard let end = subBlocksEnd(reader, from: dataStart) else { return nil }
                output.append(contentsOf: reader.bytes[offset..<end])
                offset = end
            case 0x21:
                guard let label = reader.byte(at: offset + 1), let end = subBlocksEnd(reader, from: offset + 2) else {
                    return nil
                }
                let looping =
                    reader.matches(Array("\u{0B}NETSCAPE2.0".utf8), at: offset + 2)
                    || reader.matches(Array("\u{0B}ANIMEXTS1.0".utf8), at: offset + 2)
                if label != 0xFE && (label != 0xFF || looping) {
                    output.append(contentsOf: reader.bytes[offset..<end])
                }
                offset = end
            default:
                return nil
            }
        }
        return nil
    }

    /// One past the zero-length block that ends a run of sub-blocks starting at `start`.
    private static func subBlocksEnd(_ reader: ByteReader, from start: Int) -> Int? {
        var offset = start
        while let size = reader.byte(at: offset) {
            offset += 1 + Int(size)
            if size == 0 { return offset }
        }
        return nil
    }

    // MARK: AVIF

    /// The Exif and XMP items' bytes overwritten in place (an empty TIFF structure, then zeros;
    /// XMP with spaces): no offset in the file moves, so nothing else needs rewriting.
    private static func avif(_ reader: ByteReader) -> [UInt8]? {
        guard let top = ISOBox.list(in: reader, from: 0, to: reader.count),
            let meta = ISOBox.first("meta", in: top), let boxes = meta.children(in: reader, fullBox: true)
        else { return nil }
        var output = Array(reader.bytes)
        guard let iinf = ISOBox.first("iinf", in: boxes) else { return output }
        guard let items = AVIFItems(reader, iinf: iinf), let iloc = ISOBox.first("iloc", in: boxes),
            let locations = AVIFLocations(reader, iloc: iloc, idat: ISOBox.first("idat", in: boxes))
        else { return nil }
        for (item, kind) in items.metadata {
            for range in locations.ranges(of: item) {
                guard range.lowerBound >= 0, range.upperBound <= output.count else { return nil }
                let filler: [UInt8] =
                    kind == .exif
                    ? [0, 0, 0, 0, 0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0] : Array(" ".utf8)
                for (position, index) in range.enumerated() {
                    output[index] = kind == .exif ? (position < filler.count ? filler[position] : 0) : filler[0]
                }
            }
        }
        return output
    }
}
