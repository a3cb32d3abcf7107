import Carousel
import JSON
import TimeZones

/// A banner's schedule fields (docs/SCHEDULES.md) from and to JSON: `enabled`, `startsAt`,
/// `endsAt`, `windows`. Fields at their default are not written, so unscheduled banners read as
/// they did before schedules existed.
enum ScheduleDecoding {
    static let fieldNames = ["enabled", "startsAt", "endsAt", "windows"]
    /// Enough for any week's plan; bounds the work of finding a banner's next boundary.
    static let maximumWindows = 32

    static func add(_ schedule: Schedule, to object: inout JSONObject) {
        if !schedule.enabled { object.add("enabled", false) }
        if let startsAt = schedule.startsAt { object.add("startsAt", startsAt.rfc3339) }
        if let endsAt = schedule.endsAt { object.add("endsAt", endsAt.rfc3339) }
        if !schedule.windows.isEmpty { object.add("windows", schedule.windows.map(json)) }
    }

    static func json(_ window: Window) -> JSONObject {
        var object = JSONObject()
        if window.days != .every { object.add("days", window.days.names) }
        object.add("from", window.from.description)
        object.add("to", window.to.description)
        return object
    }

    static func schedule(_ fields: JSONFields) throws(FieldError) -> Schedule {
        var schedule = Schedule()
        schedule.enabled = try fields.optional("enabled", .bool) ?? true
        schedule.startsAt = try time(fields, "startsAt")
        schedule.endsAt = try time(fields, "endsAt")
        if let startsAt = schedule.startsAt, let endsAt = schedule.endsAt, endsAt <= startsAt {
            throw FieldError(
                field: fields.fieldPath("endsAt"),
                message: "must be after startsAt (\(startsAt.rfc3339)), got \(endsAt.rfc3339)")
        }
        let windowsPath = fields.fieldPath("windows")
        let windows = try fields.optional("windows", .array) ?? []
        guard windows.count <= maximumWindows else {
            throw FieldError(field: windowsPath, message: "at most \(maximumWindows) windows, got \(windows.count)")
        }
        for (position, element) in windows.enumerated() {
            schedule.windows.append(try window(JSONFields(element, path: "\(windowsPath)[\(position)]")))
        }
        return schedule
    }

    private static func time(_ fields: JSONFields, _ key: String) throws(FieldError) -> Timestamp? {
        guard let text = try fields.optional(key, JSONKind<String>.string.orNull) ?? nil else { return nil }
        guard let time = Timestamp(rfc3339: text) else {
            throw FieldError(
                field: fields.fieldPath(key),
                message:
                    "not an RFC 3339 date-time from \(Timestamp.rfc3339Years.lowerBound) to \(Timestamp.rfc3339Years.upperBound) "
                    + "like 2026-03-01T00:00:00Z or 2026-03-01T09:00:00+01:00, got '\(text)'")
        }
        return time
    }

    private static func window(_ fields: JSONFields) throws(FieldError) -> Window {
        try fields.rejectUnknown(allowing: ["days", "from", "to"])
        let fromText = try fields.required("from", .string)
        guard let from = TimeOfDay(fromText) else {
            throw FieldError(field: fields.fieldPath("from"), message: "not a time of day HH:MM, got '\(fromText)'")
        }
        let toText = try fields.required("to", .string)
        guard let to = TimeOfDay(toText, allowingEndOfDay: true) else {
            throw FieldError(
                field: fields.fieldPath("to"), message: "not a time of day HH:MM (or 24:00), got '\(toText)'")
        }
        var days = Weekdays.every
        if let names = try fields.optional("days", .array) {
            let path = fields.fieldPath("days")
            guard !names.isEmpty else {
                throw FieldError(field: path, message: "lists no day; omit it for every day")
            }
            days = Weekdays(bits: 0)
            for (position, element) in names.enumerated() {
                let name = try JSONKind<String>.string.read(element, at: "\(path)[\(position)]")
                guard let weekday = Weekdays.names.firstIndex(of: name) else {
                    throw FieldError(field: "\(path)[\(position)]", message: "not a day (mon…sun), got '\(name)'")
                }
                guard !days.contains(weekday: weekday) else {
                    throw FieldError(field: "\(path)[\(position)]", message: "'\(name)' is listed twice")
                }
                days.insert(weekday: weekday)
            }
        }
        return Window(days: days, from: from, to: to)
    }
}
