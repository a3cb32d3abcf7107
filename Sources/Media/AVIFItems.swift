/// The metadata items an AVIF file lists in its item information box (`iinf`, ISO/IEC 14496-12
/// §8.11.6): Exif, and XMP (a `mime` item of type application/rdf+xml).
struct AVIFItems {
    enum Kind { case exif, xmp }

    private(set) var metadata: [(item: Int, kind: Kind)] = []

    init?(_ reader: ByteReader, iinf: ISOBox) {
        guard let version = reader.byte(at: iinf.contentStart) else { return nil }
        let entriesStart = iinf.contentStart + 4 + (version == 0 ? 2 : 4)
        guard let entries = ISOBox.list(in: reader, from: entriesStart, to: iinf.end) else { return nil }
        for entry in entries where entry.type == "infe" {
            guard let entryVersion = reader.byte(at: entry.contentStart), entryVersion >= 2 else { continue }
            let idSize = entryVersion == 2 ? 2 : 4
            let idOffset = entry.contentStart + 4
            guard
                let item = idSize == 2
                    ? reader.uint16BE(at: idOffset).map(Int.init) : reader.uintBE(at: idOffset, size: 4)
            else { return nil }
            let typeOffset = idOffset + idSize + 2
            if reader.matches(Array("Exif".utf8), at: typeOffset) {
                metadata.append((item, .exif))
            } else if reader.matches(Array("mime".utf8), at: typeOffset),
                reader.matches(Array("application/rdf+xml".utf8), at: typeOffset + 4)
            {
                metadata.append((item, .xmp))
            }
        }
    }
}

/// Where each item's bytes are (`iloc`, ISO/IEC 14496-12 §8.11.3): file offsets, or offsets in
/// the `idat` box (construction method 1).
struct AVIFLocations {
    private var extents: [Int: [Range<Int>]] = [:]

    init?(_ reader: ByteReader, iloc: ISOBox, idat: ISOBox?) {
        guard let version = reader.byte(at: iloc.contentStart), version <= 2,
            let sizes = reader.byte(at: iloc.contentStart + 4), let moreSizes = reader.byte(at: iloc.contentStart + 5)
        else { return nil }
        let (offsetSize, lengthSize) = (Int(sizes >> 4), Int(sizes & 0x0F))
        let baseOffsetSize = Int(moreSizes >> 4)
        let indexSize = version >= 1 ? Int(moreSizes & 0x0F) : 0
        var cursor = iloc.contentStart + 6
        func read(_ size: Int) -> Int? {
            defer { cursor += size }
            return size == 2 ? reader.uint16BE(at: cursor).map(Int.init) : reader.uintBE(at: cursor, size: size)
        }
        guard let itemCount = read(version < 2 ? 2 : 4) else { return nil }
        for _ in 0..<itemCount {
            guard cursor < iloc.end, let item = read(version < 2 ? 2 : 4) else { return nil }
            var method = 0
            if version >= 1 {
                guard let field = read(2) else { return nil }
                method = field & 0x0F
            }
            guard read(2) != nil, let base = read(baseOffsetSize), let extentCount = read(2) else { return nil }
            var ranges: [Range<Int>] = []
            for _ in 0..<extentCount {
                if indexSize > 0 { guard read(indexSize) != nil else { return nil } }
                guard let offset = read(offsetSize), let length = read(lengthSize) else { return nil }
                let origin = method == 1 ? (idat?.contentStart ?? -1) : 0
                guard method <= 1, origin >= 0, length > 0 else { continue }
                let (start, overflow) = origin.addingReportingOverflow(base)
                let (first, overflow2) = start.addingReportingOverflow(offset)
                let (last, overflow3) = first.addingReportingOverflow(length)
                guard !overflow, !overflow2, !overflow3 else { return nil }
                ranges.append(first..<last)
            }
            extents[item, default: []] += ranges
        }
    }

    func ranges(of item: Int) -> [Range<Int>] { extents[item] ?? [] }
}
