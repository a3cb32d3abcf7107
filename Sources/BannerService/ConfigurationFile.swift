import Carousel

/// Reads `config/carousel.json`-style files into a `ServiceConfiguration`.
enum ConfigurationFile {
    static let fields =
        ["host", "port", "threads", "interval", "autoplay", "corsOrigins", "heartbeat"]
        + IntegerSetting.limits.map(\.field) + ["banners"]
    static let bannerFields = ["id", "image", "caption", "link", "duration"]

    /// Applies the file's fields over `configuration`. Errors name `path` and the field.
    static func apply(_ bytes: [UInt8], from path: String, to configuration: inout ServiceConfiguration)
        throws(ConfigurationError)
    {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw ConfigurationError(source: path, message: error.description)
        }
        do {
            try apply(document, to: &configuration)
        } catch {
            throw ConfigurationError(source: path, field: error.field, message: error.message)
        }
    }

    private static func apply(_ document: JSONValue, to configuration: inout ServiceConfiguration) throws(FieldError) {
        let root = try JSONFields(document)
        try root.rejectUnknown(allowing: fields)
        if let host = try root.optional("host", .string) {
            guard !host.isEmpty else { throw FieldError(field: "host", message: "must not be empty") }
            configuration.host = host
        }
        if let port = try root.optional("port", .integer) {
            guard let value = port.integer, (0...65535).contains(value) else {
                throw FieldError(field: "port", message: "must be a port number from 0 to 65535, got \(port.literal)")
            }
            configuration.port = value
        }
        if let threads = try root.optional("threads", .integer) {
            guard let value = threads.integer, Launch.threadCounts.contains(value) else {
                throw FieldError(field: "threads", message: "must be from 1 to 256, got \(threads.literal)")
            }
            configuration.threads = value
        }
        if let interval = try root.optional("interval", .number) {
            configuration.interval = try duration(interval, field: "interval")
        }
        if let autoplay = try root.optional("autoplay", .bool) {
            configuration.autoplay = autoplay
        }
        if let origins = try root.optional("corsOrigins", .array) {
            configuration.corsOrigins = try origins.enumerated().map { (position, value) throws(FieldError) in
                let field = "corsOrigins[\(position)]"
                guard case .string(let origin) = value else {
                    throw FieldError(field: field, message: "must be a string, got \(value.kindDescription)")
                }
                guard CORSPolicy.isValidOrigin(origin) else {
                    throw FieldError(field: field, message: Launch.originRule)
                }
                return origin
            }
        }
        if let heartbeat = try root.optional("heartbeat", .number) {
            switch Validation.duration(seconds: heartbeat.double, within: Launch.heartbeats) {
            case .success(let duration): configuration.heartbeat = duration
            case .failure(let problem): throw FieldError(field: "heartbeat", message: problem.message)
            }
        }
        for setting in IntegerSetting.limits {
            guard let number = try root.optional(setting.field, .integer) else { continue }
            guard let value = number.integer, setting.range.contains(value) else {
                throw FieldError(field: setting.field, message: "\(setting.rule), got \(number.literal)")
            }
            configuration[keyPath: setting.keyPath] = value
        }
        if let banners = try root.optional("banners", .array) {
            configuration.banners = try parseBanners(banners)
        }
    }

    private static func parseBanners(_ elements: [JSONValue]) throws(FieldError) -> [Banner] {
        var banners: [Banner] = []
        var positions: [String: Int] = [:]
        for (position, element) in elements.enumerated() {
            let fields = try JSONFields(element, path: "banners[\(position)]")
            try fields.rejectUnknown(allowing: bannerFields)
            let id = try fields.required("id", .string)
            guard Validation.isBannerID(id) else {
                throw FieldError(
                    field: fields.fieldPath("id"),
                    message: "'\(id)' is not a valid id; use 1 to 64 of A-Z a-z 0-9 . _ -")
            }
            if let first = positions.updateValue(position, forKey: id) {
                throw FieldError(
                    field: fields.fieldPath("id"), message: "duplicate id '\(id)' (also banners[\(first)])")
            }
            let image = try fields.required("image", .string)
            guard Validation.isAbsoluteHTTPURL(image) else {
                throw FieldError(field: fields.fieldPath("image"), message: "not an absolute http(s) URL")
            }
            let caption = try fields.optional("caption", .string) ?? ""
            let link = try fields.optional("link", JSONKind<String>.string.orNull) ?? nil
            if let link, !Validation.isAbsoluteHTTPURL(link) {
                throw FieldError(field: fields.fieldPath("link"), message: "not an absolute http(s) URL")
            }
            var duration: Duration?
            if let seconds = try fields.optional("duration", JSONKind<JSONNumber>.number.orNull) ?? nil {
                duration = try self.duration(seconds, field: fields.fieldPath("duration"))
            }
            banners.append(Banner(id: id, image: image, caption: caption, link: link, duration: duration))
        }
        return banners
    }

    private static func duration(_ number: JSONNumber, field: String) throws(FieldError) -> Duration {
        switch Validation.duration(seconds: number.double, within: Carousel.intervals) {
        case .success(let duration): return duration
        case .failure(let problem): throw FieldError(field: field, message: problem.message)
        }
    }
}
