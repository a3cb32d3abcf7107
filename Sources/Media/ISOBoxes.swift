/// A box of an ISO base media file (AVIF's container, ISO/IEC 14496-12 §4.2): its type and
/// where its content lies in the file.
struct ISOBox {
    let type: String
    /// The first byte of the box (its size field).
    let start: Int
    /// The first byte after the header (and after version and flags, for the full boxes that
    /// `children(of:)` is told about).
    let contentStart: Int
    /// One past the last byte.
    let end: Int

    /// The boxes between `start` and `end`, in order; nil when one's size does not fit (a
    /// malformed or truncated file). A size of 0 means "to the end", 1 a 64-bit size after the type.
    static func list(in reader: ByteReader, from start: Int, to end: Int) -> [ISOBox]? {
        var boxes: [ISOBox] = []
        var offset = start
        while offset < end {
            guard let size32 = reader.uint32BE(at: offset), offset + 8 <= end else { return nil }
            let typeBytes = (4..<8).compactMap { reader.byte(at: offset + $0) }
            let type = String(decoding: typeBytes, as: UTF8.self)
            var headerSize = 8
            var size = Int(size32)
            if size32 == 1 {
                guard let large = reader.uintBE(at: offset + 8, size: 8) else { return nil }
                size = large
                headerSize = 16
            } else if size32 == 0 {
                size = end - offset
            }
            guard size >= headerSize, size <= end - offset else { return nil }
            boxes.append(ISOBox(type: type, start: offset, contentStart: offset + headerSize, end: offset + size))
            offset += size
        }
        return boxes
    }

    /// The boxes inside this one; `fullBox` skips the version and flags (4 bytes) first.
    func children(in reader: ByteReader, fullBox: Bool = false) -> [ISOBox]? {
        let first = contentStart + (fullBox ? 4 : 0)
        guard first <= end else { return nil }
        return Self.list(in: reader, from: first, to: end)
    }

    /// The first box of `type` in `boxes`.
    static func first(_ type: String, in boxes: [ISOBox]?) -> ISOBox? { boxes?.first { $0.type == type } }
}
