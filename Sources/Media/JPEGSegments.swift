/// The marker segments of a JPEG file up to and including the first start-of-scan (ITU T.81
/// §B.1.1): each marker, where its content starts and where the segment ends. Fill bytes
/// (0xFF runs) are skipped; iteration ends at a segment that does not fit.
struct JPEGSegments: Sequence, IteratorProtocol {
    struct Segment {
        let marker: UInt8
        /// The first byte of the marker (0xFF).
        let start: Int
        /// The first byte after the length field.
        let contentStart: Int
        /// One past the segment's last byte.
        let end: Int
    }

    private let reader: ByteReader
    private var offset = 2  // after SOI
    private var sawScan = false

    init(_ reader: ByteReader) { self.reader = reader }

    static func isStartOfFrame(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    mutating func next() -> Segment? {
        guard !sawScan, reader.byte(at: offset) == 0xFF else { return nil }
        var markerOffset = offset + 1
        while reader.byte(at: markerOffset) == 0xFF { markerOffset += 1 }
        guard let marker = reader.byte(at: markerOffset), marker != 0x00, marker != 0xD9,
            let length = reader.uint16BE(at: markerOffset + 1), length >= 2
        else { return nil }
        let end = markerOffset + 1 + Int(length)
        guard end <= reader.count else { return nil }
        let segment = Segment(marker: marker, start: offset, contentStart: markerOffset + 3, end: end)
        offset = end
        sawScan = marker == 0xDA
        return segment
    }
}
