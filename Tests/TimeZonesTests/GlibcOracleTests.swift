import Foundation
import Glibc
import Testing

@testable import TimeZones

/// TimeZones held to glibc, which reads the same tzdata with code of its own: for every zone of
/// the system's tzdata, every change of offset from 1970 to 2037 (the second before it and its
/// second), an instant every week, and instants far from any change read back from local time
/// (`mktime`). glibc is asked through `TZ`, which is the process's: one test does it all.
@Suite("Time zones against glibc")
struct GlibcOracleTests {
    static let start: Int64 = 0  // 1970-01-01
    static let end: Int64 = 2_145_916_800  // 2038-01-01
    static let week: Int64 = 7 * 86_400

    /// Every zone file under the system's tzdata, as `ZoneDirectory` names them (no `posix/`,
    /// `right/` or tables).
    static func zoneNames() -> [String] {
        let root = ZoneDirectory.system.path
        guard let walk = FileManager.default.enumerator(atPath: root) else { return [] }
        var names: [String] = []
        for case let name as String in walk {
            if name.hasPrefix("posix") || name.hasPrefix("right") || name == "localtime" || name == "posixrules" {
                continue
            }
            guard let handle = FileHandle(forReadingAtPath: "\(root)/\(name)"),
                let magic = try? handle.read(upToCount: 4), magic == Data("TZif".utf8)
            else { continue }
            names.append(name)
        }
        return names.sorted()
    }

    /// glibc's offset at `time` in the zone `TZ` names now.
    static func glibcOffset(at time: Int64) -> Int32 {
        var seconds = time_t(time)
        var broken = tm()
        _ = localtime_r(&seconds, &broken)
        return Int32(broken.tm_gmtoff)
    }

    /// glibc's instant of local wall-clock `local` (seconds since 1970-01-01T00:00 local).
    static func glibcInstant(ofLocal local: Int64) -> Int64 {
        let date = CivilDate(daysSinceEpoch: local.floorDivided(by: 86_400))
        let second = local - date.daysSinceEpoch * 86_400
        var broken = tm()
        broken.tm_year = Int32(date.year - 1900)
        broken.tm_mon = Int32(date.month - 1)
        broken.tm_mday = Int32(date.day)
        broken.tm_hour = Int32(second / 3600)
        broken.tm_min = Int32(second % 3600 / 60)
        broken.tm_sec = Int32(second % 60)
        broken.tm_isdst = -1
        return Int64(mktime(&broken))
    }

    /// The first second of (lower, upper] at which glibc's offset is no longer the one at `lower`.
    static func glibcChange(after lower: Int64, atOrBefore upper: Int64) -> Int64 {
        let before = glibcOffset(at: lower)
        var (low, high) = (lower, upper)
        while high - low > 1 {
            let middle = low + (high - low) / 2
            if glibcOffset(at: middle) == before { low = middle } else { high = middle }
        }
        return high
    }

    @Test func everyZoneAgreesWithGlibcFrom1970To2037() throws {
        let names = Self.zoneNames()
        try #require(names.count > 300, "the system's tzdata has its zones (\(names.count) found)")
        defer {
            unsetenv("TZ")
            tzset()
        }
        var generator = SystemRandomNumberGenerator()
        var disagreements: [String] = []
        var changes = 0
        for name in names {
            let ours = try ZoneDirectory.system.rules(named: name)
            setenv("TZ", name, 1)
            tzset()
            func compare(_ time: Int64, _ what: String) {
                let (mine, theirs) = (ours.offset(at: time), Self.glibcOffset(at: time))
                if mine != theirs, disagreements.count < 20 {
                    disagreements.append("\(name) \(what) at \(time): \(mine) here, \(theirs) in glibc")
                }
            }
            var time = Self.start
            while time < Self.end {
                let next = min(time + Self.week, Self.end)
                compare(time, "weekly")
                if Self.glibcOffset(at: next) != Self.glibcOffset(at: time) {
                    let change = Self.glibcChange(after: time, atOrBefore: next)
                    compare(change - 1, "before a change")
                    compare(change, "at a change")
                    changes += 1
                }
                time = next
            }
            // Local times far from any change name one instant, the same for both.
            for _ in 0..<100 {
                let instant = Int64.random(in: Self.start..<Self.end, using: &generator)
                let offset = Self.glibcOffset(at: instant)
                guard Self.glibcOffset(at: instant - 2 * 86_400) == offset,
                    Self.glibcOffset(at: instant + 2 * 86_400) == offset
                else { continue }
                let local = instant + Int64(offset)
                let (mine, theirs) = (ours.instant(ofLocal: local), Self.glibcInstant(ofLocal: local))
                if mine != instant || theirs != instant, disagreements.count < 20 {
                    disagreements.append("\(name) local \(local): \(mine) here, \(theirs) in glibc, \(instant) meant")
                }
            }
        }
        #expect(disagreements.isEmpty, "\n\(disagreements.joined(separator: "\n"))")
        #expect(changes > 10_000, "changes of offset compared: \(changes)")
    }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        self >= 0 ? self / divisor : -((-self + divisor - 1) / divisor)
    }
}
