/// Reads a TZif file (RFC 8536), versions 1 to 4: the 64-bit data block when there is one, and the
/// footer's POSIX rule. Leap-second records are skipped: Debian's zoneinfo has none outside
/// `right/`, and wall clocks do not show them.
enum TZif {
    /// What is wrong with a file that is not TZif.
    struct Malformed: Error {
        let reason: String
    }

    static func rules(named name: String, from bytes: [UInt8]) throws(Malformed) -> ZoneRules {
        var reader = ByteReader(bytes)
        let header = try reader.header()
        guard header.version >= 2 else {
            return try body(&reader, header, timeSize: 4, name: name, footer: nil)
        }
        try reader.skip(header.dataLength(timeSize: 4))
        let second = try reader.header()
        let rulesBeforeFooter = reader
        try reader.skip(second.dataLength(timeSize: 8))
        let footer = try reader.footer()
        var bodyReader = rulesBeforeFooter
        return try body(&bodyReader, second, timeSize: 8, name: name, footer: footer)
    }

    private static func body(
        _ reader: inout ByteReader, _ header: Header, timeSize: Int, name: String, footer: String?
    ) throws(Malformed) -> ZoneRules {
        var times: [Int64] = []
        for _ in 0..<header.transitionCount { times.append(try reader.integer(bytes: timeSize)) }
        var typeIndexes: [Int] = []
        for _ in 0..<header.transitionCount { typeIndexes.append(Int(try reader.integer(bytes: 1, signed: false))) }
        var typeOffsets: [Int32] = []
        for _ in 0..<header.typeCount {
            typeOffsets.append(Int32(truncatingIfNeeded: try reader.integer(bytes: 4)))
            try reader.skip(2)  // isdst, abbreviation index
        }
        guard !typeOffsets.isEmpty, typeIndexes.allSatisfy({ $0 < typeOffsets.count }) else {
            throw Malformed(reason: "a transition names a local time type that is not there")
        }
        guard zip(times, times.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw Malformed(reason: "transition times are not ascending")
        }
        var rule: PosixRule?
        if let footer, !footer.isEmpty {
            guard let parsed = PosixRule(footer) else { throw Malformed(reason: "footer '\(footer)' is not a TZ rule") }
            rule = parsed
        }
        return ZoneRules(
            name: name, transitions: times, offsets: typeIndexes.map { typeOffsets[$0] },
            initialOffset: typeOffsets[0], rule: rule)
    }

    struct Header {
        var version: Int
        var utIndicatorCount: Int
        var standardIndicatorCount: Int
        var leapCount: Int
        var transitionCount: Int
        var typeCount: Int
        var abbreviationBytes: Int

        func dataLength(timeSize: Int) -> Int {
            transitionCount * (timeSize + 1) + typeCount * 6 + abbreviationBytes + leapCount * (timeSize + 4)
                + standardIndicatorCount + utIndicatorCount
        }
    }

    private struct ByteReader {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        mutating func skip(_ count: Int) throws(Malformed) {
            guard count >= 0, count <= bytes.count - position else { throw Malformed(reason: "it ends too early") }
            position += count
        }

        mutating func integer(bytes size: Int, signed: Bool = true) throws(Malformed) -> Int64 {
            guard size <= bytes.count - position else { throw Malformed(reason: "it ends too early") }
            var value: UInt64 = 0
            for byte in bytes[position..<position + size] { value = value << 8 | UInt64(byte) }
            position += size
            guard signed, size < 8 else { return Int64(bitPattern: value) }
            let shift = UInt64(64 - 8 * size)
            return Int64(bitPattern: value << shift) >> Int64(shift)  // sign-extend
        }

        mutating func header() throws(Malformed) -> Header {
            guard bytes.count - position >= 44, Array(bytes[position..<position + 4]) == Array("TZif".utf8) else {
                throw Malformed(reason: "it does not start with 'TZif'")
            }
            let versionByte = bytes[position + 4]
            try skip(20)
            var counts: [Int] = []
            for _ in 0..<6 {
                let count = try integer(bytes: 4, signed: false)
                guard count < 1 << 20 else { throw Malformed(reason: "a count of \(count) is not plausible") }
                counts.append(Int(count))
            }
            let version = versionByte == 0 ? 1 : Int(versionByte) - Int(UInt8(ascii: "0"))
            return Header(
                version: version, utIndicatorCount: counts[0], standardIndicatorCount: counts[1], leapCount: counts[2],
                transitionCount: counts[3], typeCount: counts[4], abbreviationBytes: counts[5])
        }

        /// `\nTZ\n` after the version 2+ data.
        mutating func footer() throws(Malformed) -> String {
            guard position < bytes.count, bytes[position] == UInt8(ascii: "\n"),
                let end = bytes[(position + 1)...].firstIndex(of: UInt8(ascii: "\n"))
            else { throw Malformed(reason: "the footer is missing") }
            defer { position = end + 1 }
            return String(decoding: bytes[(position + 1)..<end], as: UTF8.self)
        }
    }
}
