extension Timestamp {
    /// `2026-11-29T20:00:04.000Z`: RFC 3339 in UTC with milliseconds (truncated), the API's format.
    public var rfc3339: String {
        let millisecondsTotal = floorDivide(nanosecondsSinceEpoch, 1_000_000)
        let days = floorDivide(millisecondsTotal, 86_400_000)
        let millisecondOfDay = millisecondsTotal - days * 86_400_000
        let hour = millisecondOfDay / 3_600_000
        let minute = millisecondOfDay / 60_000 % 60
        let second = millisecondOfDay / 1000 % 60
        let millisecond = millisecondOfDay % 1000
        let date = CivilDate(daysSinceEpoch: days)
        // Every instant 64 bits of nanoseconds hold (1677 to 2262) has a four-digit year: its
        // 24 bytes are written in place (a log line and a state's answer each write one or two).
        return String(unsafeUninitializedCapacity: 24) { text in
            var position = 0
            func put(_ value: Int64, digits: Int, then separator: UInt8) {
                var rest = value
                for offset in (0..<digits).reversed() {
                    text[position + offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                text[position + digits] = separator
                position += digits + 1
            }
            put(date.year, digits: 4, then: UInt8(ascii: "-"))
            put(date.month, digits: 2, then: UInt8(ascii: "-"))
            put(date.day, digits: 2, then: UInt8(ascii: "T"))
            put(hour, digits: 2, then: UInt8(ascii: ":"))
            put(minute, digits: 2, then: UInt8(ascii: ":"))
            put(second, digits: 2, then: UInt8(ascii: "."))
            put(millisecond, digits: 3, then: UInt8(ascii: "Z"))
            return position
        }
    }

    /// The years `init(rfc3339:)` reads: inside what nanoseconds since 1970 in 64 bits can hold
    /// (1677 to 2262), with room for the arithmetic of schedules.
    public static let rfc3339Years: ClosedRange<Int64> = 1900...2200

    /// An RFC 3339 date-time with any offset (`2026-03-01T00:00:00+01:00`, `2026-03-01T09:30:00.250Z`),
    /// to the millisecond the API writes (finer digits are dropped, so a time reads back as it was
    /// written). Nil when the text is not one, the date does not exist, or its year is outside
    /// `rfc3339Years`.
    public init?(rfc3339 text: String) {
        let bytes = Array(text.utf8)
        var position = 0
        func digits(_ count: Int) -> Int64? {
            guard position + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[position..<position + count] {
                guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
            }
            position += count
            return value
        }
        func expect(_ allowed: String) -> Bool {
            guard position < bytes.count, allowed.utf8.contains(bytes[position]) else { return false }
            position += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            expect("Tt "), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"),
            let second = digits(2), Self.rfc3339Years.contains(year),
            (1...12).contains(month), (1...CivilDate.days(inMonth: month, year: year)).contains(day),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var nanoseconds: Int64 = 0
        if expect(".") {
            var scale: Int64 = 100_000_000
            let start = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                if scale >= 1_000_000 { nanoseconds += Int64(bytes[position] - UInt8(ascii: "0")) * scale }
                scale /= 10
                position += 1
            }
            guard position > start else { return nil }
        }
        var offsetSeconds: Int64 = 0
        if !expect("Zz") {
            guard position < bytes.count else { return nil }
            let sign: Int64 = bytes[position] == UInt8(ascii: "-") ? -1 : 1
            guard expect("+-"), let offsetHours = digits(2), expect(":"), let offsetMinutes = digits(2),
                offsetHours < 24, offsetMinutes < 60
            else { return nil }
            offsetSeconds = sign * (offsetHours * 3600 + offsetMinutes * 60)
        }
        guard position == bytes.count else { return nil }
        let days = CivilDate(year: year, month: month, day: day).daysSinceEpoch
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        self.init(nanosecondsSinceEpoch: seconds * 1_000_000_000 + nanoseconds)
    }
}
