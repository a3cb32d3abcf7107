import Carousel

/// Field rules shared by every way banners and durations enter the service.
public enum Validation {
    /// `[A-Za-z0-9._-]{1,64}`
    public static func isBannerID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                    true
                default: false
                }
            }
    }

    /// An absolute http or https URL with a host, in printable ASCII (non-ASCII must be
    /// percent-encoded) and at most 2048 bytes.
    public static func isAbsoluteHTTPURL(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count <= 2048, bytes.allSatisfy({ (0x21...0x7E).contains($0) }) else { return false }
        let lowercased = String(decoding: bytes.prefix(8), as: UTF8.self).lowercased()
        let schemeLength: Int
        if lowercased.hasPrefix("https://") {
            schemeLength = 8
        } else if lowercased.hasPrefix("http://") {
            schemeLength = 7
        } else {
            return false
        }
        let authority = bytes[schemeLength...].prefix { !"/?#".utf8.contains($0) }
        let host = authority.split(separator: UInt8(ascii: "@"), omittingEmptySubsequences: false).last ?? []
        return !host.isEmpty && host.first != UInt8(ascii: ":")
            && !authority.contains(where: { "<>\"{}|\\^`".utf8.contains($0) })
    }

    /// A duration in seconds within `range`, or the reason it is not.
    public static func duration(seconds: Double, within range: ClosedRange<Duration>) -> Result<Duration, FieldProblem>
    {
        guard seconds.isFinite, seconds > 0 else {
            return .failure(FieldProblem("must be a number of seconds greater than 0, got \(seconds)"))
        }
        let lower = range.lowerBound.seconds
        let upper = range.upperBound.seconds
        guard seconds >= lower else {
            return .failure(FieldProblem("must be at least \(lower) seconds, got \(seconds)"))
        }
        guard seconds <= upper else {
            return .failure(FieldProblem("must be at most \(upper) seconds, got \(seconds)"))
        }
        return .success(.seconds(seconds))
    }
}

/// What is wrong with a value, before it is known which field it came from.
public struct FieldProblem: Error {
    public let message: String
    public init(_ message: String) { self.message = message }
}
