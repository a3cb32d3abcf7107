/// A POSIX `TZ` rule, as the footer of a TZif file gives it (RFC 8536 §3.3): a standard offset and,
/// optionally, a daylight offset with the yearly dates and times it starts and ends.
/// `CET-1CEST,M3.5.0,M10.5.0/3`, `IST-5:30`, `<+0545>-5:45`.
struct PosixRule: Sendable, Hashable {
    /// Seconds east of UTC (POSIX writes them west: `CET-1` is one hour east).
    var standardOffset: Int32
    var daylight: Daylight?

    struct Daylight: Sendable, Hashable {
        var offset: Int32
        var start: YearDay
        /// Seconds after local midnight (standard time) of `start`; may be negative or past 24 h.
        var startTime: Int64
        var end: YearDay
        /// Seconds after local midnight (daylight time) of `end`.
        var endTime: Int64
    }

    /// A day of a year, as a rule names it.
    enum YearDay: Sendable, Hashable {
        /// `Jn`: 1…365, 29 February never counted.
        case julianWithoutLeapDay(Int64)
        /// `n`: 0…365, 29 February counted.
        case zeroBased(Int64)
        /// `Mm.w.d`: weekday `d` (0 Sunday) of week `w` (1…5, 5 the last) of month `m`.
        case monthWeekDay(month: Int64, week: Int64, weekday: Int64)

        func date(in year: Int64) -> CivilDate {
            let newYear = CivilDate(year: year, month: 1, day: 1).daysSinceEpoch
            switch self {
            case .julianWithoutLeapDay(let day):
                let leapShift: Int64 = CivilDate.isLeapYear(year) && day >= 60 ? 1 : 0
                return CivilDate(daysSinceEpoch: newYear + day - 1 + leapShift)
            case .zeroBased(let day):
                return CivilDate(daysSinceEpoch: newYear + day)
            case .monthWeekDay(let month, let week, let weekday):
                let first = CivilDate(year: year, month: month, day: 1)
                let firstWeekday = Int64((first.weekday + 1) % 7)  // POSIX counts from Sunday
                var day = 1 + floorModulo(weekday - firstWeekday, 7) + (week - 1) * 7
                while day > CivilDate.days(inMonth: month, year: year) { day -= 7 }
                return CivilDate(year: year, month: month, day: day)
            }
        }
    }

    func offset(at time: Int64) -> Int32 {
        guard daylight != nil else { return standardOffset }
        let year = CivilDate(daysSinceEpoch: floorDivide(time, 86_400)).year
        let changes = (year - 1...year + 1).flatMap(transitions(in:)).sorted { $0.at < $1.at }
        return changes.last { $0.at <= time }?.offset ?? standardOffset
    }

    func nextTransition(after time: Int64) -> (at: Int64, offset: Int32)? {
        guard daylight != nil else { return nil }
        let year = CivilDate(daysSinceEpoch: floorDivide(time, 86_400)).year
        let changes = (year - 1...year + 1).flatMap(transitions(in:)).sorted { $0.at < $1.at }
        return changes.first { $0.at > time }
    }

    /// The start and end of daylight time in `year`, as UTC seconds.
    private func transitions(in year: Int64) -> [(at: Int64, offset: Int32)] {
        guard let daylight else { return [] }
        let start = daylight.start.date(in: year).daysSinceEpoch * 86_400 + daylight.startTime - Int64(standardOffset)
        let end = daylight.end.date(in: year).daysSinceEpoch * 86_400 + daylight.endTime - Int64(daylight.offset)
        return [(start, daylight.offset), (end, standardOffset)]
    }
}

// MARK: Parsing

extension PosixRule {
    /// Parses a `TZ` string; nil when it is not one (the caller names the file).
    init?(_ text: String) {
        var scanner = RuleScanner(Array(text.utf8))
        guard scanner.skipName(), let standard = scanner.clockTime(signed: true) else { return nil }
        standardOffset = Int32(-standard)
        guard !scanner.atEnd else {
            daylight = nil
            return
        }
        guard scanner.skipName() else { return nil }
        var daylightOffset = standardOffset + 3600
        if let given = scanner.clockTime(signed: true) { daylightOffset = Int32(-given) }
        var start = YearDay.monthWeekDay(month: 3, week: 2, weekday: 0)  // POSIX's default: US rules
        var end = YearDay.monthWeekDay(month: 11, week: 1, weekday: 0)
        var startTime: Int64 = 7200
        var endTime: Int64 = 7200
        if scanner.skip(",") {
            guard let first = scanner.yearDay() else { return nil }
            start = first
            if scanner.skip("/") {
                guard let time = scanner.clockTime(signed: true) else { return nil }
                startTime = time
            }
            guard scanner.skip(","), let second = scanner.yearDay() else { return nil }
            end = second
            if scanner.skip("/") {
                guard let time = scanner.clockTime(signed: true) else { return nil }
                endTime = time
            }
        }
        guard scanner.atEnd else { return nil }
        daylight = Daylight(offset: daylightOffset, start: start, startTime: startTime, end: end, endTime: endTime)
    }
}

/// Reads the parts of a `TZ` string left to right.
private struct RuleScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position == bytes.count }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
        position += 1
        return true
    }

    /// A zone abbreviation: three or more letters, or anything in `<…>`.
    mutating func skipName() -> Bool {
        if skip("<") {
            guard let close = bytes[position...].firstIndex(of: UInt8(ascii: ">")) else { return false }
            position = close + 1
            return true
        }
        let start = position
        while position < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[position] | 0x20) {
            position += 1
        }
        return position - start >= 3
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    mutating func clockTime(signed: Bool) -> Int64? {
        var sign: Int64 = 1
        if signed {
            if skip("-") { sign = -1 } else { _ = skip("+") }
        }
        guard let hours = number(maximumDigits: 3) else { return nil }
        var seconds = hours * 3600
        if skip(":") {
            guard let minutes = number(maximumDigits: 2) else { return nil }
            seconds += minutes * 60
            if skip(":") {
                guard let extra = number(maximumDigits: 2) else { return nil }
                seconds += extra
            }
        }
        return sign * seconds
    }

    mutating func yearDay() -> PosixRule.YearDay? {
        if skip("J") {
            guard let day = number(maximumDigits: 3), (1...365).contains(day) else { return nil }
            return .julianWithoutLeapDay(day)
        }
        if skip("M") {
            guard let month = number(maximumDigits: 2), (1...12).contains(month), skip("."),
                let week = number(maximumDigits: 1), (1...5).contains(week), skip("."),
                let weekday = number(maximumDigits: 1), (0...6).contains(weekday)
            else { return nil }
            return .monthWeekDay(month: month, week: week, weekday: weekday)
        }
        guard let day = number(maximumDigits: 3), (0...365).contains(day) else { return nil }
        return .zeroBased(day)
    }

    private mutating func number(maximumDigits: Int) -> Int64? {
        var value: Int64 = 0
        var digits = 0
        while digits < maximumDigits, position < bytes.count,
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position])
        {
            value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0"))
            position += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }
}
