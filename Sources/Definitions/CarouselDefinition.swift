import Carousel
import JSON
import TimeZones

/// What operators edit about a carousel (docs/API.md, administration): its name, its interval,
/// whether it starts playing, the time zone its banners' windows are read in, the banner shown
/// when none is eligible, and its banners in order. The state clients read is computed from it and
/// a stored anchor.
public struct CarouselDefinition: Sendable, Hashable {
    public var name: String
    public var interval: Duration
    public var autoplay: Bool
    public var timeZone: ZoneRules
    /// The id of the banner shown while none is eligible (docs/SCHEDULES.md).
    public var fallback: String?
    public var banners: [Banner]

    /// The carousel the bare v1 paths (`/banner`, …) serve.
    public static let defaultName = "default"
    public static let defaultInterval: Duration = .seconds(4)

    public init(
        name: String, interval: Duration = defaultInterval, autoplay: Bool = true, timeZone: ZoneRules = .utc,
        fallback: String? = nil, banners: [Banner] = []
    ) {
        self.name = name
        self.interval = interval
        self.autoplay = autoplay
        self.timeZone = timeZone
        self.fallback = fallback
        self.banners = banners
    }

    /// What the carousel plays.
    public var lineup: Lineup {
        Lineup(banners: banners, interval: interval, timeZone: timeZone, fallback: fallback)
    }

    /// `[a-z0-9][a-z0-9-]{0,63}`: safe in a URL path, a file name and a log line as it is.
    public static func isValidName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard (1...64).contains(bytes.count), bytes[0] != UInt8(ascii: "-") else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-")
        }
    }

    static let nameRule = "must be 1 to 64 of a-z 0-9 and -, starting with a letter or digit"
}

// MARK: JSON

extension CarouselDefinition {
    /// Fields of a definition object, in the order they are written.
    public static let fieldNames = ["name", "interval", "autoplay", "timeZone", "fallback", "banners"]
    /// What a definition body may hold: its fields, and the `revision` an answer carried (ignored).
    public static let acceptedFieldNames = fieldNames + ["revision"]

    /// The definition as JSON: `{"name", "interval", "autoplay", "timeZone", "fallback",
    /// "banners"}`, and `revision` when given (the admin API's representation).
    public func json(revision: UInt64? = nil) -> JSONObject {
        var object = JSONObject()
        object.add("name", name)
        object.add("interval", interval.seconds)
        object.add("autoplay", autoplay)
        object.add("timeZone", timeZone.name)
        object.add("fallback", fallback)
        object.add("banners", banners.map(BannerDecoding.json))
        if let revision { object.add("revision", revision) }
        return object
    }

    /// A definition object, as a configuration file, an import or the admin API gives it; every
    /// error names the field's path below `path`. `name` is required unless `impliedName` is
    /// given (the name in the URL), and must then equal it. `revision` is accepted and ignored,
    /// so that what `GET` answered can be sent back.
    public static func decode(_ value: JSONValue, path: String = "", impliedName: String? = nil) throws(FieldError)
        -> CarouselDefinition
    {
        let fields = try JSONFields(value, path: path)
        try fields.rejectUnknown(allowing: acceptedFieldNames)
        let name: String
        if let given = try fields.optional("name", .string) {
            guard isValidName(given) else {
                throw FieldError(field: fields.fieldPath("name"), message: "'\(given)' \(nameRule)")
            }
            if let impliedName, given != impliedName {
                throw FieldError(
                    field: fields.fieldPath("name"),
                    message:
                        "'\(given)' differs from the carousel's name '\(impliedName)' in the path; a carousel cannot be renamed"
                )
            }
            name = given
        } else if let impliedName {
            name = impliedName
        } else {
            throw FieldError(field: fields.fieldPath("name"), message: "required field is missing; must be a string")
        }
        _ = try fields.optional("revision", JSONKind<JSONNumber>.integralNumber.orNull)
        var definition = CarouselDefinition(name: name)
        if let interval = try fields.optional("interval", .number) {
            definition.interval = try BannerDecoding.interval(interval, field: fields.fieldPath("interval"))
        }
        definition.autoplay = try fields.optional("autoplay", .bool) ?? true
        if let zoneName = try fields.optional("timeZone", .string) {
            do {
                definition.timeZone = try ZoneDirectory.system.rules(named: zoneName)
            } catch {
                throw FieldError(field: fields.fieldPath("timeZone"), message: error.description)
            }
        }
        if let banners = try fields.optional("banners", .array) {
            definition.banners = try BannerDecoding.banners(banners, path: fields.fieldPath("banners"))
        }
        definition.fallback = try fields.optional("fallback", JSONKind<String>.string.orNull) ?? nil
        if let fallback = definition.fallback, !definition.banners.contains(where: { $0.id == fallback }) {
            throw FieldError(
                field: fields.fieldPath("fallback"),
                message: "no banner has the id '\(fallback)'; name one of `banners`")
        }
        return definition
    }

    /// The definitions of a `carousels` array, names unique.
    public static func decodeList(_ elements: [JSONValue], path: String = "carousels") throws(FieldError)
        -> [CarouselDefinition]
    {
        var definitions: [CarouselDefinition] = []
        var positions: [String: Int] = [:]
        for (position, element) in elements.enumerated() {
            let definition = try decode(element, path: "\(path)[\(position)]")
            if let first = positions.updateValue(position, forKey: definition.name) {
                throw FieldError(
                    field: "\(path)[\(position)].name",
                    message: "duplicate name '\(definition.name)' (also \(path)[\(first)])")
            }
            definitions.append(definition)
        }
        return definitions
    }

    /// The definitions as a v2 configuration file, indented, with a final newline: what
    /// `banner-server export` prints and `import` reads back unchanged.
    public static func configurationFile(_ definitions: [CarouselDefinition]) -> [UInt8] {
        var document = JSONObject()
        document.add("carousels", definitions.map { $0.json() })
        return JSONIndentation.indent(document.bytes) + [UInt8(ascii: "\n")]
    }
}
