import Foundation
import Media
import TestSupport

/// The test images of Tests/MediaTests/Fixtures: `quadrant.*` 80 × 60 in each format, `wide.jpg`
/// 1000 × 750; each white with its top-left quarter red, so that a turn shows where red went.
enum Fixtures {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: folder.appendingPathComponent(name)))
    }

    static func quadrant(_ format: ImageFormat) throws -> [UInt8] {
        try bytes("quadrant.\(format == .jpeg ? "jpg" : format.rawValue)")
    }

    /// `jpeg` with `segments` (each a whole marker segment) right after its start-of-image marker.
    static func inserting(_ segments: [[UInt8]], into jpeg: [UInt8]) -> [UInt8] {
        Array(jpeg[0..<2]) + segments.flatMap { $0 } + Array(jpeg[2...])
    }

    static func segment(_ marker: UInt8, _ content: [UInt8]) -> [UInt8] {
        let length = content.count + 2
        return [0xFF, marker, UInt8(length >> 8), UInt8(length & 0xFF)] + content
    }

    static let secretPlace = "SECRET-GPS-PLACE-52.5163N"
    static let secretComment = "shot at the CEO's house"

    /// An Exif block as a phone writes one: Orientation, and a GPS IFD whose processing method
    /// (an ASCII tag) names a place, so its absence can be checked byte for byte.
    static func phoneExif(orientation: UInt16) -> [UInt8] {
        let place = Array(secretPlace.utf8) + [0]
        // Little-endian TIFF: IFD0 at 8 (2 entries), GPS IFD right after it (1 entry), then the string.
        let ifd0At = 8
        let gpsAt = ifd0At + 2 + 2 * 12 + 4
        let stringAt = gpsAt + 2 + 12 + 4
        func le16(_ value: Int) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }
        func le32(_ value: Int) -> [UInt8] { le16(value & 0xFFFF) + le16(value >> 16) }
        var tiff: [UInt8] = Array("II".utf8) + le16(42) + le32(ifd0At)
        tiff += le16(2)
        tiff += le16(0x0112) + le16(3) + le32(1) + le16(Int(orientation)) + le16(0)
        tiff += le16(0x8825) + le16(4) + le32(1) + le32(gpsAt)
        tiff += le32(0)
        tiff += le16(1) + le16(0x001B) + le16(2) + le32(place.count) + le32(stringAt) + le32(0)
        tiff += place
        return segment(0xE1, Array("Exif\0\0".utf8) + tiff)
    }

    static func xmp() -> [UInt8] {
        segment(
            0xE1,
            Array("http://ns.adobe.com/xap/1.0/\0".utf8)
                + Array("<x:xmpmeta><photoshop:City>\(secretPlace)</photoshop:City></x:xmpmeta>".utf8))
    }

    static func comment() -> [UInt8] { segment(0xFE, Array(secretComment.utf8)) }

    /// A photo as a phone sends it: `wide.jpg` with Exif (orientation, GPS), XMP and a comment.
    static func phonePhoto(orientation: UInt16) throws -> [UInt8] {
        inserting([phoneExif(orientation: orientation), xmp(), comment()], into: try bytes("wide.jpg"))
    }
}

extension Array where Element == UInt8 {
    /// Whether `text`'s bytes occur anywhere in these.
    func containsBytes(of text: String) -> Bool {
        let needle = Array(text.utf8)
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { start in
            self[start..<(start + needle.count)].elementsEqual(needle)
        }
    }
}

/// What an independent decoder (libvips' command-line tools, another program) reads from a file.
/// Each program is run and waited for on a thread of its own, not on the few every test shares
/// (TestSupport's OffThePool.swift says why).
enum Inspect {
    /// `vips getpoint`: the pixel's bands at (x, y).
    static func pixel(_ bytes: [UInt8], x: Int, y: Int, suffix: String) async throws -> [Int] {
        try TestTier.needs("libvips' command-line tools")
        let file = try temporaryDirectory().appendingPathComponent("image.\(suffix)")
        let (status, output) = try await offThePool {
            try Data(bytes).write(to: file)
            return try shellOutput("vips getpoint \(file.path) \(x) \(y)")
        }
        guard status == 0 else { throw InspectError(message: "vips getpoint exited \(status)") }
        return output.split(whereSeparator: { $0 == " " || $0.isNewline }).compactMap { Double($0) }.map { Int($0) }
    }

    /// `vipsheader -a`: every field libvips reads from the file's header.
    static func header(_ bytes: [UInt8], suffix: String) async throws -> String {
        try TestTier.needs("libvips' command-line tools")
        let file = try temporaryDirectory().appendingPathComponent("image.\(suffix)")
        let (status, output) = try await offThePool {
            try Data(bytes).write(to: file)
            return try shellOutput("vipsheader -a \(file.path)")
        }
        guard status == 0 else { throw InspectError(message: "vipsheader exited \(status)") }
        return output
    }

    static func isRed(_ pixel: [Int]) -> Bool { pixel.count >= 3 && pixel[0] > 200 && pixel[1] < 60 && pixel[2] < 60 }
    static func isWhite(_ pixel: [Int]) -> Bool { pixel.count >= 3 && pixel[0...2].allSatisfy { $0 > 200 } }
}

struct InspectError: Error { let message: String }
