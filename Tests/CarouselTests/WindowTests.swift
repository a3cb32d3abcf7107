import Carousel
import Testing
import TimeZones

func utc(_ text: String) -> Timestamp { Timestamp(rfc3339: text)! }

func zone(_ name: String) -> ZoneRules { try! ZoneDirectory.system.rules(named: name) }

func window(_ from: String, _ to: String, days: [Int]? = nil) -> Window {
    var set = Weekdays(bits: days == nil ? 0x7F : 0)
    for day in days ?? [] { set.insert(weekday: day) }
    return Window(days: set, from: TimeOfDay(from, allowingEndOfDay: true)!, to: TimeOfDay(to, allowingEndOfDay: true)!)
}

/// Where a schedule's eligibility flips, found by its own `changesAt` steps from `start`.
func edges(of schedule: Schedule, in zone: ZoneRules, from start: Timestamp, until end: Timestamp) -> [String] {
    var edges: [String] = []
    var time = start
    var eligible = schedule.status(at: start, in: zone).eligible
    while let next = schedule.status(at: time, in: zone).changesAt, next < end {
        let now = schedule.status(at: next, in: zone).eligible
        if now != eligible { edges.append((now ? "+" : "-") + next.rfc3339) }
        eligible = now
        time = next
    }
    return edges
}

@Suite("Schedules: when a banner may rotate")
struct WindowTests {
    @Test func aWindowPastMidnightBelongsToTheDayItStarts() {
        let nights = Schedule(windows: [window("22:00", "06:00", days: [4])])  // Friday night
        let utcZone = ZoneRules.utc
        // 2026-12-04 is a Friday.
        #expect(!nights.status(at: utc("2026-12-04T21:59:59.999Z"), in: utcZone).eligible)
        #expect(nights.status(at: utc("2026-12-04T22:00:00Z"), in: utcZone).eligible)
        #expect(nights.status(at: utc("2026-12-05T05:59:59.999Z"), in: utcZone).eligible, "Saturday morning: Friday's")
        #expect(!nights.status(at: utc("2026-12-05T06:00:00Z"), in: utcZone).eligible)
        #expect(!nights.status(at: utc("2026-12-05T23:00:00Z"), in: utcZone).eligible, "not Saturday night")
        #expect(!nights.status(at: utc("2026-12-04T03:00:00Z"), in: utcZone).eligible, "not Thursday's night")
        #expect(nights.status(at: utc("2026-12-04T12:00:00Z"), in: utcZone).changesAt == utc("2026-12-04T22:00:00Z"))
        #expect(nights.status(at: utc("2026-12-04T23:00:00Z"), in: utcZone).changesAt == utc("2026-12-05T06:00:00Z"))
        #expect(nights.status(at: utc("2026-12-05T06:00:00Z"), in: utcZone).changesAt == utc("2026-12-11T22:00:00Z"))
    }

    @Test(arguments: 0..<7)
    func eachDayOfTheWeekIsItsOwn(_ weekday: Int) {
        let schedule = Schedule(windows: [window("10:00", "12:00", days: [weekday])])
        // 2026-11-30 is a Monday: day `offset` of that week has weekday `offset`.
        for offset in 0..<7 {
            let noon = utc("2026-11-30T11:00:00Z") + .seconds(86_400 * offset)
            #expect(schedule.status(at: noon, in: .utc).eligible == (offset == weekday), "weekday \(offset)")
        }
        #expect(
            edges(of: schedule, in: .utc, from: utc("2026-11-30T00:00:00Z"), until: utc("2026-12-14T00:00:00Z")) == [
                "+" + (utc("2026-11-30T10:00:00Z") + .seconds(86_400 * weekday)).rfc3339,
                "-" + (utc("2026-11-30T12:00:00Z") + .seconds(86_400 * weekday)).rfc3339,
                "+" + (utc("2026-12-07T10:00:00Z") + .seconds(86_400 * weekday)).rfc3339,
                "-" + (utc("2026-12-07T12:00:00Z") + .seconds(86_400 * weekday)).rfc3339,
            ])
    }

    @Test func startsAtIsInclusiveAndEndsAtExclusive() {
        let start = utc("2026-03-01T00:00:00Z")
        let end = utc("2026-04-01T00:00:00Z")
        let sale = Schedule(startsAt: start, endsAt: end)
        #expect(sale.status(at: start + .nanoseconds(-1), in: .utc) == (false, start))
        #expect(sale.status(at: start, in: .utc) == (true, end))
        #expect(sale.status(at: end + .nanoseconds(-1), in: .utc) == (true, end))
        #expect(sale.status(at: end, in: .utc) == (false, nil), "over for good")
        #expect(Schedule(enabled: false).status(at: start, in: .utc) == (false, nil))
        #expect(Schedule.always.status(at: start, in: .utc) == (true, nil))
    }

    @Test func datesAndWindowsTogether() {
        let breakfast = Schedule(
            startsAt: utc("2026-12-02T08:30:00Z"), endsAt: utc("2026-12-03T07:00:00Z"),
            windows: [window("06:00", "10:30")])
        #expect(
            edges(of: breakfast, in: .utc, from: utc("2026-12-01T00:00:00Z"), until: utc("2026-12-05T00:00:00Z")) == [
                "+2026-12-02T08:30:00.000Z", "-2026-12-02T10:30:00.000Z", "+2026-12-03T06:00:00.000Z",
                "-2026-12-03T07:00:00.000Z",
            ])
    }

    @Test func berlinOnTheDayTheClocksGoForwardAndOnTheDayTheyGoBack() {
        let berlin = zone("Europe/Berlin")
        let early = Schedule(windows: [window("02:30", "04:00")])
        // 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist, the window opens at 03:00 CEST.
        #expect(
            edges(of: early, in: berlin, from: utc("2026-03-28T12:00:00Z"), until: utc("2026-03-29T12:00:00Z")) == [
                "+2026-03-29T01:00:00.000Z", "-2026-03-29T02:00:00.000Z",
            ])
        // 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens twice, the window opens at the first.
        #expect(
            edges(of: early, in: berlin, from: utc("2026-10-24T12:00:00Z"), until: utc("2026-10-26T00:00:00Z")) == [
                "+2026-10-25T00:30:00.000Z", "-2026-10-25T03:00:00.000Z",
            ])
        // A window swallowed whole by the gap does not open that day; the next day it does.
        let swallowed = Schedule(windows: [window("02:10", "02:50")])
        #expect(
            edges(of: swallowed, in: berlin, from: utc("2026-03-28T12:00:00Z"), until: utc("2026-03-30T12:00:00Z")) == [
                "+2026-03-30T00:10:00.000Z", "-2026-03-30T00:50:00.000Z",
            ])
    }

    @Test func newYorkWeekdaysAcrossTheSpringChange() {
        let newYork = zone("America/New_York")
        let office = Schedule(windows: [window("09:00", "17:00", days: [0, 1, 2, 3, 4])])
        // Friday 2026-03-06 in EST (UTC−5); Monday 2026-03-09 in EDT (UTC−4).
        #expect(
            edges(of: office, in: newYork, from: utc("2026-03-06T00:00:00Z"), until: utc("2026-03-10T00:00:00Z")) == [
                "+2026-03-06T14:00:00.000Z", "-2026-03-06T22:00:00.000Z",
                "+2026-03-09T13:00:00.000Z", "-2026-03-09T21:00:00.000Z",
            ])
    }

    @Test func kolkataHasAHalfHourOffset() {
        let lunch = Schedule(windows: [window("12:00", "14:30")])
        #expect(
            edges(
                of: lunch, in: zone("Asia/Kolkata"), from: utc("2026-12-01T00:00:00Z"),
                until: utc("2026-12-02T00:00:00Z")) == ["+2026-12-01T06:30:00.000Z", "-2026-12-01T09:00:00.000Z"])
    }

    @Test func aWindowToMidnightAndTwoWindowsEndToEnd() {
        let evening = Schedule(windows: [window("18:00", "24:00"), window("00:00", "06:00")])
        #expect(evening.status(at: utc("2026-12-01T23:59:59Z"), in: .utc).eligible)
        #expect(evening.status(at: utc("2026-12-02T00:00:00Z"), in: .utc).eligible)
        #expect(
            edges(of: evening, in: .utc, from: utc("2026-12-01T12:00:00Z"), until: utc("2026-12-02T12:00:00Z")) == [
                "+2026-12-01T18:00:00.000Z", "-2026-12-02T06:00:00.000Z",
            ], "midnight is a boundary where nothing changes")
    }
}
