import Glibc
import Testing

@testable import TimeZones

/// Seconds since the epoch of a UTC (or, read as local, a wall-clock) date and time.
private func seconds(_ year: Int64, _ month: Int64, _ day: Int64, _ hour: Int64 = 0, _ minute: Int64 = 0) -> Int64 {
    CivilDate(year: year, month: month, day: day).daysSinceEpoch * 86_400 + hour * 3600 + minute * 60
}

private func zone(_ name: String) throws -> ZoneRules {
    try ZoneDirectory.system.rules(named: name)
}

@Suite("Calendar dates")
struct CivilDateTests {
    @Test func daysAndDatesRoundTripAcrossCenturiesAndLeapDays() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).daysSinceEpoch == 0)
        #expect(CivilDate(year: 1969, month: 12, day: 31).daysSinceEpoch == -1)
        #expect(
            CivilDate(year: 2000, month: 3, day: 1).daysSinceEpoch
                - CivilDate(year: 2000, month: 2, day: 28).daysSinceEpoch == 2)
        #expect(
            CivilDate(year: 2100, month: 3, day: 1).daysSinceEpoch
                - CivilDate(year: 2100, month: 2, day: 28).daysSinceEpoch == 1)
        for day in stride(from: Int64(-800_000), through: 800_000, by: 997) {
            #expect(CivilDate(daysSinceEpoch: day).daysSinceEpoch == day)
        }
        #expect(CivilDate(daysSinceEpoch: 20_541).description == "2026-03-29")
    }

    @Test func weekdaysCountFromMonday() {
        #expect(CivilDate(year: 1970, month: 1, day: 1).weekday == 3)  // a Thursday
        #expect(CivilDate(year: 2026, month: 3, day: 29).weekday == 6)  // a Sunday
        #expect(CivilDate(year: 2026, month: 11, day: 30).weekday == 0)  // a Monday
        #expect(CivilDate(year: 1969, month: 12, day: 29).weekday == 0)
    }
}

@Suite("Time zones from the system's tzdata")
struct ZoneRulesTests {
    @Test func berlinChangesAtOneUTCOnTheLastSundaysOfMarchAndOctober() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.offset(at: seconds(2026, 3, 29, 1) - 1) == 3600)
        #expect(berlin.offset(at: seconds(2026, 3, 29, 1)) == 7200)
        #expect(berlin.offset(at: seconds(2026, 10, 25, 1) - 1) == 7200)
        #expect(berlin.offset(at: seconds(2026, 10, 25, 1)) == 3600)
    }

    @Test func aLocalTimeInTheSpringGapNamesTheMomentOfTheChange() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.instant(ofLocal: seconds(2026, 3, 29, 2, 30)) == seconds(2026, 3, 29, 1))
        #expect(berlin.instant(ofLocal: seconds(2026, 3, 29, 2, 0)) == seconds(2026, 3, 29, 1))
        #expect(berlin.instant(ofLocal: seconds(2026, 3, 29, 3, 0)) == seconds(2026, 3, 29, 1))
        #expect(berlin.instant(ofLocal: seconds(2026, 3, 29, 1, 59)) == seconds(2026, 3, 29, 0, 59))
        let newYork = try zone("America/New_York")
        #expect(newYork.instant(ofLocal: seconds(2026, 3, 8, 2, 30)) == seconds(2026, 3, 8, 7))
    }

    @Test func aLocalTimeThatHappensTwiceNamesItsFirstOccurrence() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.instant(ofLocal: seconds(2026, 10, 25, 2, 30)) == seconds(2026, 10, 25, 0, 30))
        #expect(berlin.instant(ofLocal: seconds(2026, 10, 25, 3, 0)) == seconds(2026, 10, 25, 2))
        let newYork = try zone("America/New_York")
        #expect(newYork.instant(ofLocal: seconds(2026, 11, 1, 1, 30)) == seconds(2026, 11, 1, 5, 30))
        #expect(newYork.instant(ofLocal: seconds(2026, 11, 1, 2, 0)) == seconds(2026, 11, 1, 7))
    }

    @Test func halfHourOffsetsAndZonesWithoutChanges() throws {
        let kolkata = try zone("Asia/Kolkata")
        #expect(kolkata.offset(at: seconds(2026, 6, 1)) == 19_800)
        #expect(kolkata.instant(ofLocal: seconds(2026, 1, 1)) == seconds(2025, 12, 31, 18, 30))
        #expect(kolkata.localSeconds(at: seconds(2025, 12, 31, 18, 30)) == seconds(2026, 1, 1))
        let utc = try zone("UTC")
        #expect(utc.offset(at: seconds(2026, 7, 1)) == 0)
        #expect(utc.instant(ofLocal: seconds(2026, 7, 1, 12)) == seconds(2026, 7, 1, 12))
    }

    /// Past the file's table the footer's rule takes over: it must agree with the table where both exist.
    @Test(arguments: ["Europe/Berlin", "America/New_York", "Australia/Sydney", "America/Santiago", "Asia/Kolkata"])
    func theFootersRuleAgreesWithTheTable(_ name: String) throws {
        let rules = try zone(name)
        let rule = try #require(rules.rule)
        for hour in stride(from: seconds(2030, 1, 1), to: seconds(2031, 1, 1), by: 3600) {
            #expect(rule.offset(at: hour) == rules.offset(at: hour), "\(name) at \(hour)")
        }
    }

    @Test func yearsPastTheTableFollowTheRuleSouthernHemisphereIncluded() throws {
        let berlin = try zone("Europe/Berlin")
        #expect(berlin.offset(at: seconds(2100, 1, 15)) == 3600)
        #expect(berlin.offset(at: seconds(2100, 7, 15)) == 7200)
        #expect(berlin.offset(at: seconds(2100, 3, 28, 1) - 1) == 3600)  // the last Sunday of March 2100
        #expect(berlin.offset(at: seconds(2100, 3, 28, 1)) == 7200)
        let sydney = try zone("Australia/Sydney")
        #expect(sydney.offset(at: seconds(2100, 1, 15)) == 39_600)
        #expect(sydney.offset(at: seconds(2100, 7, 15)) == 36_000)
        #expect(sydney.instant(ofLocal: seconds(2100, 10, 3, 2, 30)) == seconds(2100, 10, 2, 16))
    }

    @Test func posixRulesOfEveryShape() throws {
        #expect(PosixRule("IST-5:30") == PosixRule(standardOffset: 19_800, daylight: nil))
        #expect(PosixRule("<+0545>-5:45")?.standardOffset == 20_700)
        let chile = try #require(PosixRule("<-04>4<-03>,M9.1.6/24,M4.1.6/24"))
        #expect(chile.daylight?.startTime == 86_400)
        let julian = try #require(PosixRule("XXX3YYY,J60/2,300/-1"))
        #expect(julian.daylight?.start.date(in: 2028) == CivilDate(year: 2028, month: 3, day: 1))
        #expect(julian.daylight?.end.date(in: 2028) == CivilDate(year: 2028, month: 10, day: 27))
        #expect(julian.daylight?.endTime == -3600)
        for invalid in [
            "", "AB-1", "CET", "CET-1CEST,M13.1.0,M10.5.0", "CET-1CEST,M3.5.0", "CET-1CEST,M3.5.0,M10.5.0/x",
        ] {
            #expect(PosixRule(invalid) == nil, "\(invalid)")
        }
    }
}

@Suite("Time zone names")
struct ZoneDirectoryTests {
    @Test func aMisspeltNameIsUnknownAndSaysWhich() {
        #expect(throws: UnknownTimeZone(name: "Europe/Berlinn", reason: nil)) { try zone("Europe/Berlinn") }
        #expect(
            UnknownTimeZone(name: "Europe/Berlinn", reason: nil).description == #"unknown time zone "Europe/Berlinn""#)
    }

    @Test(arguments: ["../../etc/passwd", "/etc/passwd", "Europe/../UTC", "", "Europe", "zone.tab", "Europe/ Berlin"])
    func namesOutsideTheDatabaseAreUnknown(_ name: String) {
        #expect(throws: UnknownTimeZone.self) { try zone(name) }
    }

    @Test func withoutTzdataOnlyUTCWorksAndTheErrorSaysWhatToInstall() throws {
        let empty = ZoneDirectory(path: "/nonexistent-zoneinfo")
        #expect(try empty.rules(named: "UTC") == .utc)
        #expect(
            throws: UnknownTimeZone(
                name: "Europe/Berlin", reason: "no time zone data in /nonexistent-zoneinfo: install tzdata")
        ) {
            try empty.rules(named: "Europe/Berlin")
        }
    }

    @Test func aDamagedFileIsRefusedNamingIt() throws {
        var template = Array("/tmp/zoneinfo-XXXXXX".utf8CString)
        let directory = String(cString: try #require(mkdtemp(&template)))
        defer {
            _ = unlink("\(directory)/Broken")
            _ = rmdir(directory)
        }
        let original = try #require(fopen("/usr/share/zoneinfo/Europe/Berlin", "rb"))
        var bytes = [UInt8](repeating: 0, count: 300)
        let count = fread(&bytes, 1, bytes.count, original)
        fclose(original)
        let copy = try #require(fopen("\(directory)/Broken", "wb"))
        fwrite(bytes, 1, count, copy)
        fclose(copy)
        #expect(throws: UnknownTimeZone(name: "Broken", reason: "\(directory)/Broken: it ends too early")) {
            try ZoneDirectory(path: directory).rules(named: "Broken")
        }
    }
}
