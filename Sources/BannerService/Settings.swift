import BannerAPI
import Carousel
import CarouselRuntime
import Definitions
import JSON
import Logging

/// A change to a configuration, once a value was read and checked.
typealias Assignment = @Sendable (inout ServiceConfiguration) -> Void

/// One setting of the service, declared once: where it may come from (flag, environment variable,
/// file field), its default and range as an operator reads them, and how a value is checked. The
/// usage text (`Launch.usage`), the three parsers (`Flags`, `Launch.parse`, `ConfigurationFile`)
/// and docs/CONFIGURATION.md's table (checked by a test) all come from `Setting.all`.
struct Setting: Sendable {
    /// `--port`, nil when the setting has no flag.
    let flag: String?
    /// What the flag takes, in the usage: `PORT`.
    let metavariable: String
    let variable: String?
    let field: String?
    /// The default as docs/CONFIGURATION.md writes it (without backticks).
    let defaultValue: String
    /// One line for the usage; docs/CONFIGURATION.md says more.
    let help: String
    /// Checks a flag's or variable's value; nil for a file-only setting (and `--config`).
    let fromText: (@Sendable (String) throws(FieldProblem) -> Assignment)?
    /// Checks a file field's value, whose path is given for the message; nil when not a field.
    let fromJSON: (@Sendable (JSONValue, String) throws(FieldError) -> Assignment)?

    /// Every setting, in the order of the usage, the file's fields and the docs' table.
    static let all: [Setting] = [
        config,
        string(
            flag: "--host", metavariable: "HOST", variable: "CAROUSEL_HOST", field: "host", defaultValue: "0.0.0.0",
            help: "address to listen on (IPv4/IPv6 literal or name; :: takes both)",
            text: { value throws(FieldProblem) in
                guard !value.isEmpty else { throw FieldProblem("must not be empty") }
                return value
            }, set: { $0.host = $1 }),
        integer(
            flag: "--port", metavariable: "PORT", variable: "CAROUSEL_PORT", field: "port", defaultValue: "8080",
            help: "TCP port; 0 binds a free one (printed on start)", range: 0...65535,
            textRule: "is not a port number", fileRule: "must be a port number", set: { $0.port = $1 }),
        integer(
            flag: "--threads", metavariable: "N", variable: "CAROUSEL_THREADS", field: "threads",
            defaultValue: "one per usable core", help: "HTTP worker threads", range: 1...256,
            textRule: "is not a thread count", fileRule: "must be", set: { $0.threads = $1 }),
        seconds(
            flag: "--interval", metavariable: "SECONDS", variable: "CAROUSEL_INTERVAL", field: "interval",
            defaultValue: "4", help: "auto-advance interval in seconds", range: Carousel.intervals,
            set: { $0.interval = $1 }),
        Setting(
            flag: nil, metavariable: "", variable: nil, field: "autoplay", defaultValue: "true",
            help: "false starts paused", fromText: nil,
            fromJSON: { value, path throws(FieldError) in
                let autoplay = try JSONKind<Bool>.bool.read(value, at: path)
                return { $0.autoplay = autoplay }
            }),
        Setting(
            flag: nil, metavariable: "", variable: "CAROUSEL_CORS_ORIGINS", field: "corsOrigins",
            defaultValue: "none (CORS off)", help: "web origins allowed to call the API (comma-separated, or *)",
            fromText: { value throws(FieldProblem) in
                let origins = value.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }
                    .filter { !$0.isEmpty }
                if let invalid = origins.first(where: { !CORSPolicy.isValidOrigin($0) }) {
                    throw FieldProblem("'\(invalid)' \(originRule)")
                }
                return { $0.corsOrigins = origins }
            },
            fromJSON: { value, path throws(FieldError) in
                let origins = try JSONKind<[JSONValue]>.array.read(value, at: path).enumerated().map {
                    (position, element) throws(FieldError) in
                    let field = "\(path)[\(position)]"
                    let origin = try JSONKind<String>.string.read(element, at: field)
                    guard CORSPolicy.isValidOrigin(origin) else { throw FieldError(field: field, message: originRule) }
                    return origin
                }
                return { $0.corsOrigins = origins }
            }),
        seconds(
            flag: nil, metavariable: "", variable: "CAROUSEL_HEARTBEAT", field: "heartbeat", defaultValue: "15",
            help: "seconds between heartbeat comments on event streams", range: .milliseconds(10) ... .seconds(3600),
            set: { $0.heartbeat = $1 }),
        seconds(
            flag: nil, metavariable: "", variable: "CAROUSEL_STATS_FLUSH", field: "statsFlush", defaultValue: "10",
            help: "seconds between writes of play, view and click counts to the store (what kill -9 can lose)",
            range: .milliseconds(100) ... .seconds(10), set: { $0.statsFlush = $1 }),
        seconds(
            flag: nil, metavariable: "", variable: "CAROUSEL_SCREEN_TIMEOUT", field: "screenTimeout",
            defaultValue: "30", help: "seconds after which a screen not heard from is offline",
            // At least 3 s: a screen is written once a second and read back by other replicas a second later.
            range: .seconds(3) ... .seconds(86_400), set: { $0.fleet.screenTimeout = $1 }),
        integer(
            flag: nil, metavariable: "", variable: "CAROUSEL_MAX_SCREENS", field: "maxScreens", defaultValue: "10000",
            help: "screens tracked per carousel; a new one past it is served, not tracked", range: 1...1_000_000,
            textRule: "must be a whole number of screens", set: { $0.fleet.maxScreens = $1 }),
        seconds(
            flag: nil, metavariable: "", variable: "CAROUSEL_STEP_TOLERANCE", field: "stepTolerance",
            defaultValue: "0.05", help: "seconds a screen's flip may be from the carousel's and be in step",
            range: .milliseconds(1) ... .seconds(60), set: { $0.fleet.stepTolerance = $1 }),
        seconds(
            flag: nil, metavariable: "", variable: "CAROUSEL_SCREEN_RETENTION", field: "screenRetention",
            defaultValue: "2592000", help: "seconds an offline screen is kept before it is forgotten (30 days)",
            range: .seconds(60) ... .seconds(10 * 366 * 86_400), set: { $0.fleet.screenRetention = $1 }),
        integer(
            flag: nil, metavariable: "", variable: "CAROUSEL_MEDIA_MAX_BYTES", field: "mediaMaxBytes",
            defaultValue: "10485760", help: "largest image upload in bytes; a larger one is refused before it is read",
            range: 1024...268_435_456, textRule: "must be a whole number of bytes",
            set: { $0.media.limits.maxBytes = $1 }),
        integer(
            flag: nil, metavariable: "", variable: "CAROUSEL_MEDIA_MAX_PIXELS", field: "mediaMaxPixels",
            defaultValue: "40000000", help: "most pixels an uploaded image may declare (checked before decoding)",
            range: 1...1_000_000_000, textRule: "must be a whole number of pixels",
            set: { $0.media.limits.maxPixels = $1 }),
        integer(
            flag: nil, metavariable: "", variable: "CAROUSEL_MEDIA_DECODES", field: "mediaDecodes",
            defaultValue: "half the usable cores, at least 1", help: "uploads decoded at once", range: 1...64,
            textRule: "must be a whole number of decodes", set: { $0.media.decodes = $1 }),
        integer(
            flag: "--connection-timeout", metavariable: "S", variable: "CAROUSEL_CONNECTION_TIMEOUT",
            field: "connectionTimeout", defaultValue: "15",
            help: "seconds for the headers, again for the body, or idle between requests", range: 1...3600,
            textRule: "must be a whole number of seconds",
            set: { $0.connectionTimeout = $1 }),
        integer(
            flag: "--max-connections", metavariable: "N", variable: "CAROUSEL_MAX_CONNECTIONS",
            field: "maxConnections", defaultValue: "16384", help: "connections open at once, event streams included",
            range: 1...1_000_000, textRule: "must be a whole number of connections", set: { $0.maxConnections = $1 }),
        integer(
            flag: "--connection-memory", metavariable: "B", variable: "CAROUSEL_CONNECTION_MEMORY",
            field: "connectionMemory", defaultValue: "16384",
            help: "bytes per connection for the request line and headers", range: 4096...1_048_576,
            textRule: "must be a whole number of bytes",
            set: { $0.connectionMemory = $1 }),
        integer(
            flag: "--max-body", metavariable: "B", variable: "CAROUSEL_MAX_BODY", field: "maxBody",
            defaultValue: "16384", help: "largest request body in bytes", range: 64...1_048_576,
            textRule: "must be a whole number of bytes",
            set: { $0.maxBody = $1 }),
        Setting(
            flag: "--fast-paths", metavariable: "MODE", variable: "CAROUSEL_FAST_PATHS", field: "fastPaths",
            defaultValue: "on",
            help: "on, or off: libmicrohttpd answers everything (no acceptor, no read loops); same bytes either way",
            fromText: { value throws(FieldProblem) in
                switch value {
                case "on": return { $0.fastPaths = true }
                case "off": return { $0.fastPaths = false }
                default: throw FieldProblem("'\(value)' is not on or off")
                }
            },
            fromJSON: { value, path throws(FieldError) in
                let fastPaths = try JSONKind<Bool>.bool.read(value, at: path)
                return { $0.fastPaths = fastPaths }
            }),
        Setting(
            flag: nil, metavariable: "", variable: "CAROUSEL_WEBHOOK_ALLOW_PRIVATE", field: "webhookAllowPrivate",
            defaultValue: "false",
            help:
                "true: webhooks may call loopback and private addresses (tests, a private network); false: public only",
            fromText: { value throws(FieldProblem) in
                switch value {
                case "true": return { $0.webhookAllowPrivate = true }
                case "false": return { $0.webhookAllowPrivate = false }
                default: throw FieldProblem("'\(value)' is not true or false")
                }
            },
            fromJSON: { value, path throws(FieldError) in
                let allowed = try JSONKind<Bool>.bool.read(value, at: path)
                return { $0.webhookAllowPrivate = allowed }
            }),
        Setting(
            flag: nil, metavariable: "", variable: nil, field: "banners", defaultValue: "[]",
            help: "the banners, in order", fromText: nil,
            fromJSON: { value, path throws(FieldError) in
                let banners = try BannerDecoding.banners(JSONKind<[JSONValue]>.array.read(value, at: path), path: path)
                return { $0.banners = banners }
            }),
        Setting(
            flag: nil, metavariable: "", variable: nil, field: "carousels", defaultValue: "none (v1 fields)",
            help: "the carousels, each a definition (v2 files)", fromText: nil,
            fromJSON: { value, path throws(FieldError) in
                let list = try CarouselDefinition.decodeList(
                    JSONKind<[JSONValue]>.array.read(value, at: path), path: path)
                return { $0.carousels = list }
            }),
        Setting(
            flag: "--store", metavariable: "STORE", variable: "CAROUSEL_STORE", field: nil,
            defaultValue: "sqlite:\(StoreLocation.defaultPath)",
            help: "where carousels are kept: memory, sqlite:PATH or PATH",
            fromText: { value throws(FieldProblem) in
                let location = try StoreLocation.parse(value)
                return { $0.store = location }
            }, fromJSON: nil),
        token(
            variable: "CAROUSEL_CONTROL_TOKEN", help: "bearer token required on commands (POST and PUT of v1)",
            unsetMeans: "allow commands without one", set: { $0.controlToken = $1 }),
        tokenFile(
            variable: "CAROUSEL_CONTROL_TOKEN_FILE", help: "file holding the control token (a mounted secret)",
            unsetMeans: "allow commands without one", set: { $0.controlToken = $1 }),
        token(
            variable: "CAROUSEL_ADMIN_TOKEN", help: "bearer token required on admin requests; grants control too",
            unsetMeans: "take admin requests from this host only", set: { $0.adminToken = $1 }),
        tokenFile(
            variable: "CAROUSEL_ADMIN_TOKEN_FILE", help: "file holding the admin token (a mounted secret)",
            unsetMeans: "take admin requests from this host only", set: { $0.adminToken = $1 }),
        Setting(
            flag: "--log-level", metavariable: "LEVEL", variable: "CAROUSEL_LOG_LEVEL", field: nil,
            defaultValue: "info", help: "trace, debug, info, notice, warning, error or critical",
            fromText: { value throws(FieldProblem) in
                guard let level = Logger.Level(name: value) else {
                    let names = Logger.Level.allCases.map(\.description).joined(separator: ", ")
                    throw FieldProblem("'\(value)' is not a log level; use one of \(names)")
                }
                return { $0.logLevel = level }
            }, fromJSON: nil),
    ]

    /// The configuration file: read first, by `Launch.parse`, to find the file the others may
    /// come from.
    static let config = Setting(
        flag: "--config", metavariable: "PATH", variable: "CAROUSEL_CONFIG", field: nil,
        defaultValue: Launch.defaultConfigPath, help: "configuration file", fromText: nil, fromJSON: nil)

    static let originRule = "must be * or an origin like https://shop.example.com (lowercase, no path)"

    /// The file's fields, in order.
    static var fields: [String] { all.compactMap(\.field) }

    // MARK: Kinds of settings

    /// A bearer token from an environment variable.
    private static func token(
        variable: String, help: String, unsetMeans: String,
        set: @escaping @Sendable (inout ServiceConfiguration, String) -> Void
    ) -> Setting {
        Setting(
            flag: nil, metavariable: "", variable: variable, field: nil, defaultValue: "none", help: help,
            fromText: { value throws(FieldProblem) in
                let token = try checkedToken(value, unsetMeans: unsetMeans)
                return { set(&$0, token) }
            }, fromJSON: nil)
    }

    /// A bearer token read from a file (its content, without a final line break), as container
    /// secrets are mounted.
    private static func tokenFile(
        variable: String, help: String, unsetMeans: String,
        set: @escaping @Sendable (inout ServiceConfiguration, String) -> Void
    ) -> Setting {
        Setting(
            flag: nil, metavariable: "", variable: variable, field: nil, defaultValue: "none", help: help,
            fromText: { path throws(FieldProblem) in
                switch FileContents.read(path) {
                case .contents(let bytes):
                    var text = String(decoding: bytes, as: UTF8.self)
                    while text.hasSuffix("\n") || text.hasSuffix("\r") { text.removeLast() }
                    do throws(FieldProblem) {
                        let token = try checkedToken(text, unsetMeans: unsetMeans)
                        return { set(&$0, token) }
                    } catch {
                        throw FieldProblem("the token in \(path) \(error.message)")
                    }
                case .missing:
                    throw FieldProblem("\(path): no such file")
                case .unreadable(let reason):
                    throw FieldProblem("\(path): cannot read: \(reason)")
                }
            }, fromJSON: nil)
    }

    /// The shortest bootstrap token taken: these tokens open the whole service, and one of a few
    /// characters is guessed.
    static let minimumTokenLength = 16

    /// Empty is refused rather than read as "no token": it is almost always an unset variable in
    /// a deployment template; shorter than `minimumTokenLength` too.
    private static func checkedToken(_ value: String, unsetMeans: String) throws(FieldProblem) -> String {
        guard !value.isEmpty else { throw FieldProblem("is set but empty; set a token, or unset it to \(unsetMeans)") }
        guard value.utf8.count >= minimumTokenLength else {
            throw FieldProblem(
                "is \(value.utf8.count) characters; a token needs at least \(minimumTokenLength), one that cannot be "
                    + "guessed (openssl rand -base64 24 makes one)")
        }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=".utf8)
        guard value.utf8.count <= 1024, value.utf8.allSatisfy(allowed.contains) else {
            throw FieldProblem("must be at most 1024 of A-Z a-z 0-9 - . _ ~ + / =")
        }
        return value
    }

    /// A string read the same way from text and JSON.
    private static func string(
        flag: String?, metavariable: String, variable: String?, field: String?, defaultValue: String, help: String,
        text: @escaping @Sendable (String) throws(FieldProblem) -> String,
        set: @escaping @Sendable (inout ServiceConfiguration, String) -> Void
    ) -> Setting {
        Setting(
            flag: flag, metavariable: metavariable, variable: variable, field: field, defaultValue: defaultValue,
            help: help,
            fromText: { raw throws(FieldProblem) in
                let value = try text(raw)
                return { set(&$0, value) }
            },
            fromJSON: { raw, path throws(FieldError) in
                let string = try JSONKind<String>.string.read(raw, at: path)
                let value: String
                do throws(FieldProblem) {
                    value = try text(string)
                } catch {
                    throw FieldError(field: path, message: error.message)
                }
                return { set(&$0, value) }
            })
    }

    /// A whole number within `range`. Flags and variables say `'<value>' <textRule> from a to b`;
    /// files say `<fileRule> from a to b, got <value>` (`fileRule` defaults to `textRule`).
    private static func integer(
        flag: String?, metavariable: String, variable: String, field: String, defaultValue: String, help: String,
        range: ClosedRange<Int>, textRule: String, fileRule: String? = nil,
        set: @escaping @Sendable (inout ServiceConfiguration, Int) -> Void
    ) -> Setting {
        let bounds = "from \(range.lowerBound) to \(range.upperBound)"
        @Sendable func assign(_ number: Int) -> Assignment { { set(&$0, number) } }
        return Setting(
            flag: flag, metavariable: metavariable, variable: variable, field: field, defaultValue: defaultValue,
            help: "\(help) (\(range.lowerBound) to \(range.upperBound))",
            fromText: { value throws(FieldProblem) in
                guard let number = Int(value), range.contains(number) else {
                    throw FieldProblem("'\(value)' \(textRule) \(bounds)")
                }
                return assign(number)
            },
            fromJSON: { value, path throws(FieldError) in
                let number = try JSONKind<JSONNumber>.integer.read(value, at: path)
                guard let integer = number.integer, range.contains(integer) else {
                    throw FieldError(field: path, message: "\(fileRule ?? textRule) \(bounds), got \(number.literal)")
                }
                return assign(integer)
            })
    }

    /// A number of seconds within `range` (the domain's own ranges, such as `Carousel.intervals`).
    private static func seconds(
        flag: String?, metavariable: String, variable: String, field: String, defaultValue: String, help: String,
        range: ClosedRange<Duration>, set: @escaping @Sendable (inout ServiceConfiguration, Duration) -> Void
    ) -> Setting {
        @Sendable func duration(_ seconds: Double) throws(FieldProblem) -> Assignment {
            switch Validation.duration(seconds: seconds, within: range) {
            case .success(let duration): return { set(&$0, duration) }
            case .failure(let problem): throw problem
            }
        }
        return Setting(
            flag: flag, metavariable: metavariable, variable: variable, field: field, defaultValue: defaultValue,
            help: "\(help) (\(range.lowerBound.seconds) to \(range.upperBound.seconds))",
            fromText: { value throws(FieldProblem) in
                guard let seconds = Double(value) else { throw FieldProblem("'\(value)' is not a number of seconds") }
                return try duration(seconds)
            },
            fromJSON: { value, path throws(FieldError) in
                let number = try JSONKind<JSONNumber>.number.read(value, at: path)
                do throws(FieldProblem) {
                    return try duration(number.double)
                } catch {
                    throw FieldError(field: path, message: error.message)
                }
            })
    }
}
