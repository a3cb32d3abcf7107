import Glibc
import Platform
import Threading

/// The system's time zone database: TZif files under `/usr/share/zoneinfo` (Debian's `tzdata`),
/// or under `$TZDIR` when set. Each zone is read once and kept: files are small (a few KiB) and a
/// name always means the same rules while the process runs.
public final class ZoneDirectory: Sendable {
    /// The directory the process uses: `$TZDIR`, else `/usr/share/zoneinfo`.
    public static let system = ZoneDirectory(path: getenv("TZDIR").map { String(cString: $0) } ?? "/usr/share/zoneinfo")

    public let path: String
    private let loaded = Lock<[String: ZoneRules]>(["UTC": .utc])

    public init(path: String) {
        self.path = path
    }

    /// The rules of the zone called `name` (`Europe/Berlin`). `UTC` needs no file.
    public func rules(named name: String) throws(UnknownTimeZone) -> ZoneRules {
        if let known = loaded.withLock({ $0[name] }) { return known }
        guard Self.isPlausibleName(name) else { throw UnknownTimeZone(name: name, reason: nil) }
        let file = "\(path)/\(name)"
        let bytes: [UInt8]
        switch SmallFile.read(file) {
        case .success(let contents): bytes = contents
        case .failure(let error) where error.code == ENOENT || error.code == ENOTDIR:
            let haveData = access("\(path)/UTC", R_OK) == 0 || access("\(path)/Etc/UTC", R_OK) == 0
            throw UnknownTimeZone(name: name, reason: haveData ? nil : "no time zone data in \(path): install tzdata")
        case .failure(let error):
            throw UnknownTimeZone(name: name, reason: "\(file): \(error.message)")
        }
        do {
            let rules = try TZif.rules(named: name, from: bytes)
            loaded.withLock { $0[name] = rules }
            return rules
        } catch {
            // A directory or a table (`zone.tab`) is not a zone, whatever its name.
            throw UnknownTimeZone(
                name: name, reason: bytes.starts(with: Array("TZif".utf8)) ? "\(file): \(error.reason)" : nil)
        }
    }

    /// Area/Location names as the IANA database spells them: letters, digits, `._+-`, no `.` or
    /// `..` components, no leading `/`, so a name never leaves the directory.
    static func isPlausibleName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count) else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { part in
            !part.isEmpty && part != "." && part != ".." && !part.hasPrefix(".")
                && part.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"),
                        UInt8(ascii: "."):
                        true
                    default: false
                    }
                }
        }
    }
}

/// A time zone name the system does not know, with why when it is not simply misspelt.
public struct UnknownTimeZone: Error, Hashable, CustomStringConvertible {
    public let name: String
    public let reason: String?

    /// `unknown time zone "Europe/Berlinn"`, as field messages quote it.
    public var description: String {
        "unknown time zone \"\(name)\"" + (reason.map { " (\($0))" } ?? "")
    }
}
