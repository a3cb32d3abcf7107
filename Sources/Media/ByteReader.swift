/// Bounds-checked reads of untrusted bytes: every read past the end is nil, never a trap and
/// never a read outside the buffer. The one way the hand-written parsers here touch a file.
struct ByteReader {
    let bytes: UnsafeRawBufferPointer

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var count: Int { bytes.count }

    func byte(at offset: Int) -> UInt8? {
        offset >= 0 && offset < bytes.count ? bytes[offset] : nil
    }

    func matches(_ expected: [UInt8], at offset: Int) -> Bool {
        guard offset >= 0, offset <= bytes.count - expected.count else { return false }
        return expected.indices.allSatisfy { bytes[offset + $0] == expected[$0] }
    }

    func uint16BE(at offset: Int) -> UInt16? {
        guard let high = byte(at: offset), let low = byte(at: offset + 1) else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    func uint16LE(at offset: Int) -> UInt16? {
        guard let low = byte(at: offset), let high = byte(at: offset + 1) else { return nil }
        return UInt16(high) << 8 | UInt16(low)
    }

    func uint24LE(at offset: Int) -> UInt32? {
        guard let low = uint16LE(at: offset), let high = byte(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint32BE(at offset: Int) -> UInt32? {
        guard let high = uint16BE(at: offset), let low = uint16BE(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint32LE(at offset: Int) -> UInt32? {
        guard let low = uint16LE(at: offset), let high = uint16LE(at: offset + 2) else { return nil }
        return UInt32(high) << 16 | UInt32(low)
    }

    func uint64BE(at offset: Int) -> UInt64? {
        guard let high = uint32BE(at: offset), let low = uint32BE(at: offset + 4) else { return nil }
        return UInt64(high) << 32 | UInt64(low)
    }

    /// An unsigned big-endian integer of `size` bytes (0, 4 or 8: ISO BMFF's variable fields).
    func uintBE(at offset: Int, size: Int) -> Int? {
        switch size {
        case 0: 0
        case 4: uint32BE(at: offset).map(Int.init)
        case 8: uint64BE(at: offset).flatMap { Int(exactly: $0) }
        default: nil
        }
    }
}
