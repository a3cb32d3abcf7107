import BannerAPI
import Carousel
import JSON

/// Reads `config/carousel.json`-style files into a `ServiceConfiguration`.
enum ConfigurationFile {
    static let fields =
        ["host", "port", "threads", "interval", "autoplay", "corsOrigins", "heartbeat"]
        + IntegerSetting.limits.map(\.field) + ["banners"]

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
            configuration.interval = try BannerDecoding.interval(interval, field: "interval")
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
            configuration.banners = try BannerDecoding.banners(banners)
        }
    }
}
