import BannerAPI
import Carousel
import Glibc
import Logging

/// What the command line asks for: run with a configuration, or print the usage.
public enum Launch: Equatable, Sendable {
    case run(ServiceConfiguration, notes: [String])
    /// `banner-server healthcheck`: ask the configured host and port for /healthz, then exit.
    case healthCheck(ServiceConfiguration)
    case help

    public static let defaultConfigPath = "config/carousel.json"

    public static let usage = """
        Usage: banner-server [--config PATH] [--host HOST] [--port PORT] [--threads N]
                             [--interval SECONDS] [--log-level LEVEL]
               banner-server healthcheck [the same options]

        Serves a banner carousel over HTTP (see README.md for the API).

          --config PATH        configuration file (default \(defaultConfigPath); env CAROUSEL_CONFIG)
          --host HOST          address to listen on (default 0.0.0.0; env CAROUSEL_HOST)
          --port PORT          port, 0 for any free one (default 8080; env CAROUSEL_PORT)
          --threads N          HTTP worker threads (default one per usable core; env CAROUSEL_THREADS)
          --interval SECONDS   auto-advance interval, > 0 (default 4; env CAROUSEL_INTERVAL)
          --log-level LEVEL    trace, debug, info, notice, warning, error or critical
                               (default info; env CAROUSEL_LOG_LEVEL)

        Limits (each also a file field and a CAROUSEL_ variable; see README):
          --connection-timeout S   seconds for a whole request, or idle between requests (15)
          --max-connections N      connections open at once, event streams included (16384)
          --connection-memory B    bytes per connection for request line and headers (16384)
          --max-body B             largest request body in bytes (16384)
          -h, --help           print this help

        `banner-server healthcheck` asks the service at the configured host and port for
        /healthz (2 s timeout) and exits 0 when it answers ok, 1 otherwise: for a container
        HEALTHCHECK or a Kubernetes exec probe.

        CAROUSEL_CONTROL_TOKEN, when set, is required as `Authorization: Bearer <token>` on every
        POST and PUT. CAROUSEL_CORS_ORIGINS (comma-separated, or *) lets web pages on those origins
        call the API; CAROUSEL_HEARTBEAT sets the seconds between event-stream heartbeats (15).
        Precedence: flag > environment > file > default.
        """

    /// The environment variables the service reads.
    public static let environmentVariables =
        [
            "CAROUSEL_CONFIG", "CAROUSEL_HOST", "CAROUSEL_PORT", "CAROUSEL_THREADS", "CAROUSEL_INTERVAL",
            "CAROUSEL_CONTROL_TOKEN", "CAROUSEL_LOG_LEVEL", "CAROUSEL_CORS_ORIGINS", "CAROUSEL_HEARTBEAT",
        ] + IntegerSetting.limits.map(\.variable)

    /// This process's values of `environmentVariables`.
    public static func processEnvironment() -> [String: String] {
        var values: [String: String] = [:]
        for name in environmentVariables {
            if let value = getenv(name) { values[name] = String(cString: value) }
        }
        return values
    }

    /// Merges, lowest precedence first: built-in defaults, the configuration file, the
    /// environment, the flags. Every error names where the bad value came from.
    public static func parse(
        arguments: [String], environment: [String: String],
        readFile: (String) -> FileContents = FileContents.read
    ) throws(ConfigurationError) -> Launch {
        let isHealthCheck = arguments.first == "healthcheck"
        let flags = try Flags.parse(isHealthCheck ? Array(arguments.dropFirst()) : arguments)
        if flags.help { return .help }
        var configuration = ServiceConfiguration()
        var notes: [String] = []

        let explicitPath = flags.values["--config"] ?? environment["CAROUSEL_CONFIG"]
        let path = explicitPath ?? defaultConfigPath
        switch readFile(path) {
        case .contents(let bytes):
            try ConfigurationFile.apply(bytes, from: path, to: &configuration)
        case .missing where explicitPath == nil:
            notes.append("no configuration file at \(path); starting with built-in defaults and no banners")
        case .missing:
            throw ConfigurationError(source: path, message: "no such file")
        case .unreadable(let reason):
            throw ConfigurationError(source: path, message: "cannot read: \(reason)")
        }

        /// The values given for one setting, environment first, so that the flag is applied last.
        func overrides(_ variable: String, _ flag: String) -> [(source: String, value: String)] {
            [(variable, environment[variable]), (flag, flags.values[flag])].compactMap { source, value in
                value.map { (source, $0) }
            }
        }
        for (source, value) in overrides("CAROUSEL_HOST", "--host") {
            configuration.host = try host(value, source: source)
        }
        for (source, value) in overrides("CAROUSEL_PORT", "--port") {
            configuration.port = try port(value, source: source)
        }
        for (source, value) in overrides("CAROUSEL_THREADS", "--threads") {
            configuration.threads = try threads(value, source: source)
        }
        for (source, value) in overrides("CAROUSEL_INTERVAL", "--interval") {
            configuration.interval = try interval(value, source: source)
        }
        for (source, value) in overrides("CAROUSEL_LOG_LEVEL", "--log-level") {
            configuration.logLevel = try logLevel(value, source: source)
        }
        for setting in IntegerSetting.limits {
            for (source, value) in overrides(setting.variable, setting.flag) {
                guard let number = Int(value), setting.range.contains(number) else {
                    throw ConfigurationError(source: source, message: "'\(value)' \(setting.rule)")
                }
                configuration[keyPath: setting.keyPath] = number
            }
        }
        if let origins = environment["CAROUSEL_CORS_ORIGINS"] {
            configuration.corsOrigins = try corsOrigins(origins)
        }
        if let heartbeat = environment["CAROUSEL_HEARTBEAT"] {
            configuration.heartbeat = try seconds(heartbeat, within: heartbeats, source: "CAROUSEL_HEARTBEAT")
        }
        if let token = environment["CAROUSEL_CONTROL_TOKEN"] {
            configuration.controlToken = try controlToken(token)
        }
        return isHealthCheck ? .healthCheck(configuration) : .run(configuration, notes: notes)
    }

    private static func host(_ value: String, source: String) throws(ConfigurationError) -> String {
        guard !value.isEmpty else { throw ConfigurationError(source: source, message: "must not be empty") }
        return value
    }

    private static func port(_ value: String, source: String) throws(ConfigurationError) -> Int {
        guard let port = Int(value), (0...65535).contains(port) else {
            throw ConfigurationError(source: source, message: "'\(value)' is not a port number from 0 to 65535")
        }
        return port
    }

    /// Worker threads an operator may ask for.
    static let threadCounts = 1...256

    private static func threads(_ value: String, source: String) throws(ConfigurationError) -> Int {
        guard let threads = Int(value), threadCounts.contains(threads) else {
            throw ConfigurationError(source: source, message: "'\(value)' is not a thread count from 1 to 256")
        }
        return threads
    }

    private static func interval(_ value: String, source: String) throws(ConfigurationError) -> Duration {
        try seconds(value, within: Carousel.intervals, source: source)
    }

    /// Heartbeats of event streams an operator may ask for.
    static let heartbeats: ClosedRange<Duration> = .milliseconds(10) ... .seconds(3600)
    static let originRule = "must be * or an origin like https://shop.example.com (lowercase, no path)"

    private static func seconds(_ value: String, within range: ClosedRange<Duration>, source: String)
        throws(ConfigurationError) -> Duration
    {
        guard let seconds = Double(value) else {
            throw ConfigurationError(source: source, message: "'\(value)' is not a number of seconds")
        }
        switch Validation.duration(seconds: seconds, within: range) {
        case .success(let duration): return duration
        case .failure(let problem): throw ConfigurationError(source: source, message: problem.message)
        }
    }

    /// A comma-separated list; empty means CORS off.
    private static func corsOrigins(_ value: String) throws(ConfigurationError) -> [String] {
        let origins = value.split(separator: ",").map { String($0).trimmingCharacters(in: " ") }.filter { !$0.isEmpty }
        if let invalid = origins.first(where: { !CORSPolicy.isValidOrigin($0) }) {
            throw ConfigurationError(source: "CAROUSEL_CORS_ORIGINS", message: "'\(invalid)' \(originRule)")
        }
        return origins
    }

    private static func logLevel(_ value: String, source: String) throws(ConfigurationError) -> Logger.Level {
        guard let level = Logger.Level(name: value) else {
            let names = Logger.Level.allCases.map(\.description).joined(separator: ", ")
            throw ConfigurationError(source: source, message: "'\(value)' is not a log level; use one of \(names)")
        }
        return level
    }

    /// A bearer token (RFC 6750 b64token characters). An empty one is refused rather than
    /// taken as "no token": it is almost always an unset variable in a deployment template.
    private static func controlToken(_ value: String) throws(ConfigurationError) -> String {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=".utf8)
        guard !value.isEmpty else {
            throw ConfigurationError(
                source: "CAROUSEL_CONTROL_TOKEN",
                message: "is set but empty; set a token, or unset it to allow commands without one")
        }
        guard value.utf8.count <= 1024, value.utf8.allSatisfy(allowed.contains) else {
            throw ConfigurationError(
                source: "CAROUSEL_CONTROL_TOKEN", message: "must be at most 1024 of A-Z a-z 0-9 - . _ ~ + / =")
        }
        return value
    }
}

/// The command-line flags, as given: `--name value` or `--name=value`.
struct Flags {
    static var valued: [String] {
        ["--config", "--host", "--port", "--threads", "--interval", "--log-level"] + IntegerSetting.limits.map(\.flag)
    }
    var values: [String: String] = [:]
    var help = false

    static func parse(_ arguments: [String]) throws(ConfigurationError) -> Flags {
        var flags = Flags()
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            if argument == "--help" || argument == "-h" {
                flags.help = true
                continue
            }
            let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard valued.contains(name) else {
                throw ConfigurationError(source: argument, message: "unknown option; see --help")
            }
            let value: String
            if parts.count == 2 {
                value = String(parts[1])
            } else if let next = remaining.popFirst() {
                value = next
            } else {
                throw ConfigurationError(source: name, message: "needs a value; see --help")
            }
            flags.values[name] = value
        }
        return flags
    }
}

/// The outcome of reading a whole (small) file.
public enum FileContents: Sendable {
    case contents([UInt8])
    case missing
    case unreadable(String)

    /// Files over 1 MiB are refused: a configuration is small, and `/dev/zero` is not one.
    public static func read(_ path: String) -> FileContents {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            return errno == ENOENT ? .missing : .unreadable(String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        let limit = 1 << 20
        var contents: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = Glibc.read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return .unreadable(String(cString: strerror(errno))) }
            if count == 0 { return .contents(contents) }
            contents.append(contentsOf: chunk[..<count])
            guard contents.count <= limit else { return .unreadable("larger than 1 MiB") }
        }
    }
}
