import Carousel
import Foundation
import JSON
import Logging
import TestSupport
import Testing

@testable import BannerAPI
@testable import BannerService

/// A file system with the given files, for `Launch.parse`.
func files(_ contents: [String: String]) -> (String) -> FileContents {
    { path in contents[path].map { .contents(Array($0.utf8)) } ?? .missing }
}

func configuration(
    _ arguments: [String] = [], environment: [String: String] = [:], files contents: [String: String] = [:]
) throws -> ServiceConfiguration {
    guard
        case .run(let configuration, _) = try Launch.parse(
            arguments: arguments, environment: environment, readFile: files(contents))
    else {
        throw ConfigurationError(source: "test", message: "expected .run")
    }
    return configuration
}

func configurationError(
    _ arguments: [String] = [], environment: [String: String] = [:], files contents: [String: String] = [:]
) -> String? {
    do {
        _ = try Launch.parse(arguments: arguments, environment: environment, readFile: files(contents))
        return nil
    } catch {
        return error.description
    }
}

let oneBanner = #"{"banners": [{"id": "a", "image": "https://cdn.example.com/a.png"}]}"#

@Suite("Configuration sources and precedence")
struct LaunchTests {
    @Test func withoutAFileTheDefaultsApplyAndTheOperatorIsTold() throws {
        let launch = try Launch.parse(arguments: [], environment: [:], readFile: files([:]))
        guard case .run(let configuration, let notes) = launch else {
            Issue.record("expected a run, got \(launch)")
            return
        }
        #expect(configuration == ServiceConfiguration())
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 8080)
        #expect(configuration.interval == .seconds(4))
        #expect(configuration.autoplay)
        #expect(configuration.controlToken == nil)
        #expect(configuration.threads == nil)
        #expect(
            notes == ["no configuration file at config/carousel.json; starting with built-in defaults and no banners"])
    }

    @Test func theFileOverridesTheDefaults() throws {
        let file = #"{"host": "127.0.0.1", "port": 9000, "threads": 3, "interval": 2.5, "autoplay": false}"#
        let loaded = try configuration(files: ["config/carousel.json": file])
        #expect(loaded.host == "127.0.0.1")
        #expect(loaded.port == 9000)
        #expect(loaded.interval == .milliseconds(2500))
        #expect(!loaded.autoplay)
        #expect(loaded.threads == 3)
    }

    @Test func theEnvironmentOverridesTheFileAndFlagsOverrideTheEnvironment() throws {
        let file = #"{"host": "127.0.0.1", "port": 9000, "threads": 1, "interval": 2.5}"#
        let environment = [
            "CAROUSEL_HOST": "::1", "CAROUSEL_PORT": "9100", "CAROUSEL_INTERVAL": "3", "CAROUSEL_LOG_LEVEL": "debug",
            "CAROUSEL_THREADS": "2",
        ]
        let fromEnvironment = try configuration(environment: environment, files: ["config/carousel.json": file])
        #expect(fromEnvironment.host == "::1")
        #expect(fromEnvironment.port == 9100)
        #expect(fromEnvironment.interval == .seconds(3))
        #expect(fromEnvironment.logLevel == .debug)
        #expect(fromEnvironment.threads == 2)

        let fromFlags = try configuration(
            ["--host", "localhost", "--port=0", "--interval", "0.25", "--log-level", "warning", "--threads", "4"],
            environment: environment, files: ["config/carousel.json": file])
        #expect(fromFlags.host == "localhost")
        #expect(fromFlags.port == 0)
        #expect(fromFlags.interval == .milliseconds(250))
        #expect(fromFlags.logLevel == .warning)
        #expect(fromFlags.threads == 4)
    }

    @Test func theConfigPathComesFromTheFlagThenTheEnvironment() throws {
        let contents = ["flag.json": #"{"port": 1}"#, "env.json": #"{"port": 2}"#]
        #expect(
            try configuration(["--config", "flag.json"], environment: ["CAROUSEL_CONFIG": "env.json"], files: contents)
                .port == 1)
        #expect(try configuration(environment: ["CAROUSEL_CONFIG": "env.json"], files: contents).port == 2)
    }

    @Test func anExplicitConfigPathThatDoesNotExistIsAnError() {
        #expect(configurationError(["--config", "missing.json"]) == "missing.json: no such file")
        #expect(configurationError(environment: ["CAROUSEL_CONFIG": "gone.json"]) == "gone.json: no such file")
    }

    @Test func corsOriginsAndHeartbeatComeFromTheFileOrTheEnvironment() throws {
        let file = #"{"corsOrigins": ["https://shop.example.com", "http://localhost:3000"], "heartbeat": 30}"#
        let fromFile = try configuration(files: ["config/carousel.json": file])
        #expect(fromFile.corsOrigins == ["https://shop.example.com", "http://localhost:3000"])
        #expect(fromFile.heartbeat == .seconds(30))
        let fromEnvironment = try configuration(
            environment: ["CAROUSEL_CORS_ORIGINS": " https://a.example ,*", "CAROUSEL_HEARTBEAT": "5"],
            files: ["config/carousel.json": file])
        #expect(fromEnvironment.corsOrigins == ["https://a.example", "*"])
        #expect(fromEnvironment.heartbeat == .seconds(5))
        #expect(try configuration(environment: ["CAROUSEL_CORS_ORIGINS": ""]).corsOrigins == [])
        #expect(ServiceConfiguration().corsOrigins == [], "CORS is off by default")
        #expect(ServiceConfiguration().heartbeat == .seconds(15))
    }

    @Test func limitsHaveDefaultsAndComeFromFileEnvironmentAndFlags() throws {
        let defaults = ServiceConfiguration()
        #expect(defaults.connectionTimeout == 15)
        #expect(defaults.maxConnections == 16_384)
        #expect(defaults.connectionMemory == 16_384)
        #expect(defaults.maxBody == 16_384)
        let file = #"{"connectionTimeout": 30, "maxConnections": 100, "connectionMemory": 8192, "maxBody": 1024}"#
        let fromFile = try configuration(files: ["config/carousel.json": file])
        #expect(fromFile.connectionTimeout == 30)
        #expect(fromFile.maxConnections == 100)
        #expect(fromFile.connectionMemory == 8192)
        #expect(fromFile.maxBody == 1024)
        let environment = [
            "CAROUSEL_CONNECTION_TIMEOUT": "5", "CAROUSEL_MAX_CONNECTIONS": "200",
            "CAROUSEL_CONNECTION_MEMORY": "32768",
            "CAROUSEL_MAX_BODY": "2048",
        ]
        let fromEnvironment = try configuration(environment: environment, files: ["config/carousel.json": file])
        #expect(fromEnvironment.connectionTimeout == 5)
        #expect(fromEnvironment.maxConnections == 200)
        #expect(fromEnvironment.connectionMemory == 32768)
        #expect(fromEnvironment.maxBody == 2048)
        let fromFlags = try configuration(
            ["--connection-timeout", "7", "--max-connections=300", "--connection-memory", "4096", "--max-body", "64"],
            environment: environment, files: ["config/carousel.json": file])
        #expect(fromFlags.connectionTimeout == 7)
        #expect(fromFlags.maxConnections == 300)
        #expect(fromFlags.connectionMemory == 4096)
        #expect(fromFlags.maxBody == 64)
    }

    @Test func theControlTokenComesFromTheEnvironment() throws {
        #expect(
            try configuration(environment: ["CAROUSEL_CONTROL_TOKEN": "s3cret-Token_1/xyz+"]).controlToken
                == "s3cret-Token_1/xyz+")
    }

    @Test func theListeningURLBracketsIPv6Hosts() {
        var configuration = ServiceConfiguration()
        #expect(configuration.url(boundPort: 8080) == "http://0.0.0.0:8080")
        configuration.host = "::"
        #expect(configuration.url(boundPort: 8080) == "http://[::]:8080")
        configuration.host = "localhost"
        #expect(configuration.url(boundPort: 1) == "http://localhost:1")
    }

    @Test func healthcheckTakesTheSameOptions() throws {
        guard
            case .healthCheck(let configuration) = try Launch.parse(
                arguments: ["healthcheck", "--port", "9999"], environment: ["CAROUSEL_HOST": "::"], readFile: files([:])
            )
        else {
            Issue.record("expected .healthCheck")
            return
        }
        #expect(configuration.port == 9999)
        #expect(configuration.host == "::")
    }

    @Test func helpIsRecognised() throws {
        #expect(try Launch.parse(arguments: ["--help"], environment: [:], readFile: files([:])) == .help)
        #expect(try Launch.parse(arguments: ["-h"], environment: [:], readFile: files([:])) == .help)
        #expect(Launch.usage.contains("--interval SECONDS"))
    }

    @Test(arguments: [
        (["--verbose"], [String: String](), "--verbose: unknown option; see --help"),
        (["--port"], [:], "--port: needs a value; see --help"),
        (["--port", "http"], [:], "--port: 'http' is not a port number from 0 to 65535"),
        (["--port", "65536"], [:], "--port: '65536' is not a port number from 0 to 65535"),
        (["--interval", "0"], [:], "--interval: must be a number of seconds greater than 0, got 0.0"),
        (["--interval", "-1"], [:], "--interval: must be a number of seconds greater than 0, got -1.0"),
        (["--interval", "soon"], [:], "--interval: 'soon' is not a number of seconds"),
        (["--interval", "0.0001"], [:], "--interval: must be at least 0.001 seconds, got 0.0001"),
        (["--host="], [:], "--host: must not be empty"),
        (["--threads", "0"], [:], "--threads: '0' is not a thread count from 1 to 256"),
        (
            [], ["CAROUSEL_CORS_ORIGINS": "https://ok.example, HTTPS://SHOUT.EXAMPLE"],
            "CAROUSEL_CORS_ORIGINS: 'HTTPS://SHOUT.EXAMPLE' must be * or an origin like https://shop.example.com (lowercase, no path)"
        ),
        ([], ["CAROUSEL_HEARTBEAT": "0.001"], "CAROUSEL_HEARTBEAT: must be at least 0.01 seconds, got 0.001"),
        (
            ["--max-connections", "0"], [:],
            "--max-connections: '0' must be a whole number of connections from 1 to 1000000"
        ),
        (
            [], ["CAROUSEL_CONNECTION_TIMEOUT": "15s"],
            "CAROUSEL_CONNECTION_TIMEOUT: '15s' must be a whole number of seconds from 1 to 3600"
        ),
        ([], ["CAROUSEL_THREADS": "many"], "CAROUSEL_THREADS: 'many' is not a thread count from 1 to 256"),
        (
            ["--log-level", "loud"], [:],
            "--log-level: 'loud' is not a log level; use one of trace, debug, info, notice, warning, error, critical"
        ),
        ([], ["CAROUSEL_PORT": "-1"], "CAROUSEL_PORT: '-1' is not a port number from 0 to 65535"),
        ([], ["CAROUSEL_INTERVAL": "nan"], "CAROUSEL_INTERVAL: must be a number of seconds greater than 0, got nan"),
        ([], ["CAROUSEL_INTERVAL": "1e9"], "CAROUSEL_INTERVAL: must be at most 31536000.0 seconds, got 1000000000.0"),
        (
            [], ["CAROUSEL_CONTROL_TOKEN": ""],
            "CAROUSEL_CONTROL_TOKEN: is set but empty; set a token, or unset it to allow commands without one"
        ),
        (
            [], ["CAROUSEL_ADMIN_TOKEN": ""],
            "CAROUSEL_ADMIN_TOKEN: is set but empty; set a token, or unset it to take admin requests from this host only"
        ),
        (
            [], ["CAROUSEL_ADMIN_TOKEN_FILE": "/nonexistent/admin-token"],
            "CAROUSEL_ADMIN_TOKEN_FILE: /nonexistent/admin-token: no such file"
        ),
        (
            ["--store", "sqlite:"], [:],
            "--store: 'sqlite:' names no file; use memory, sqlite:PATH, a file path or postgres://…"
        ),
        (
            [], ["CAROUSEL_ADMIN_TOKEN": "s3cret"],
            "CAROUSEL_ADMIN_TOKEN: is 6 characters; a token needs at least 16, one that cannot be guessed "
                + "(openssl rand -base64 24 makes one)"
        ),
        (
            [], ["CAROUSEL_CONTROL_TOKEN": "has space in a long token"],
            "CAROUSEL_CONTROL_TOKEN: must be at most 1024 of A-Z a-z 0-9 - . _ ~ + / ="
        ),
    ])
    func badFlagsAndVariablesNameTheirSource(_ arguments: [String], _ environment: [String: String], _ message: String)
    {
        #expect(configurationError(arguments, environment: environment) == message)
    }

    @Test func aTokenFileGivesTheTokenAndATokenGivenTwiceIsRefused() throws {
        let file = try temporaryFile(named: "admin-token", contents: "s3cret-admin-token\n")
        #expect(
            try configuration(environment: ["CAROUSEL_ADMIN_TOKEN_FILE": file.path]).adminToken == "s3cret-admin-token")
        #expect(
            configurationError(environment: [
                "CAROUSEL_ADMIN_TOKEN": "another-admin-token", "CAROUSEL_ADMIN_TOKEN_FILE": file.path,
            ])
                == "CAROUSEL_ADMIN_TOKEN_FILE: CAROUSEL_ADMIN_TOKEN is set too; set one of them")
        let spaced = try temporaryFile(named: "control-token", contents: "has space in a long token\n")
        #expect(
            configurationError(environment: ["CAROUSEL_CONTROL_TOKEN_FILE": spaced.path])
                == "CAROUSEL_CONTROL_TOKEN_FILE: the token in \(spaced.path) must be at most 1024 of A-Z a-z 0-9 - . _ ~ + / ="
        )
    }
}

@Suite("Configuration file validation")
struct ConfigurationFileTests {
    static let path = "config/carousel.json"

    func error(_ file: String) -> String? {
        configurationError(files: [Self.path: file])
    }

    @Test func readsBannersWithEveryField() throws {
        let file = #"""
            {"banners": [
              {"id": "a", "image": "https://cdn.example.com/a.png", "caption": "A", "link": "https://shop.example.com/a", "duration": 6},
              {"id": "b", "image": "http://cdn.example.com/b.png", "link": null, "duration": null}
            ]}
            """#
        let banners = try configuration(files: [Self.path: file]).banners
        #expect(
            banners == [
                Banner(
                    id: "a", image: "https://cdn.example.com/a.png", caption: "A", link: "https://shop.example.com/a",
                    duration: .seconds(6)),
                Banner(id: "b", image: "http://cdn.example.com/b.png", caption: "", link: nil, duration: nil),
            ])
    }

    @Test(
        arguments: [
            (
                "{\"port\": 80,}",
                "config/carousel.json: invalid JSON at line 1, column 13: expected a string key in quotes"
            ),
            ("[]", "config/carousel.json: (document): must be a JSON object, got an array"),
            (
                #"{"intervall": 3}"#,
                "config/carousel.json: intervall: unknown field; expected one of: host, port, threads, interval, autoplay, corsOrigins, heartbeat, statsFlush, screenTimeout, maxScreens, stepTolerance, screenRetention, mediaMaxBytes, mediaMaxPixels, mediaDecodes, connectionTimeout, maxConnections, connectionMemory, maxBody, fastPaths, webhookAllowPrivate, banners, carousels"
            ),
            (#"{"corsOrigins": "*"}"#, "config/carousel.json: corsOrigins: must be an array, got a string"),
            (#"{"corsOrigins": [7]}"#, "config/carousel.json: corsOrigins[0]: must be a string, got a number"),
            (
                #"{"corsOrigins": ["https://a.example", "https://b.example/app"]}"#,
                "config/carousel.json: corsOrigins[1]: must be * or an origin like https://shop.example.com (lowercase, no path)"
            ),
            (
                #"{"heartbeat": 0}"#,
                "config/carousel.json: heartbeat: must be a number of seconds greater than 0, got 0.0"
            ),
            (
                #"{"connectionTimeout": 0}"#,
                "config/carousel.json: connectionTimeout: must be a whole number of seconds from 1 to 3600, got 0"
            ),
            (
                #"{"maxBody": 1.5}"#, "config/carousel.json: maxBody: must be an integer, got a number"
            ),
            (
                #"{"connectionMemory": 1024}"#,
                "config/carousel.json: connectionMemory: must be a whole number of bytes from 4096 to 1048576, got 1024"
            ),
            (#"{"threads": 0}"#, "config/carousel.json: threads: must be from 1 to 256, got 0"),
            (#"{"threads": 2.5}"#, "config/carousel.json: threads: must be an integer, got a number"),
            (#"{"port": 8080.5}"#, "config/carousel.json: port: must be an integer, got a number"),
            (#"{"port": 70000}"#, "config/carousel.json: port: must be a port number from 0 to 65535, got 70000"),
            (#"{"host": ""}"#, "config/carousel.json: host: must not be empty"),
        ] + carouselFieldRules.map { ($0.0, "config/carousel.json: " + $0.1) })
    func invalidFilesNameTheFileAndTheField(_ file: String, _ message: String) {
        #expect(error(file) == message)
    }

    /// A v2 file's carousels carry the settings a v1 file has no place for.
    @Test(arguments: carouselFieldRules + carouselSettingRules)
    func invalidCarouselsOfAV2FileNameTheCarouselAndTheField(_ fields: String, _ message: String) {
        let file = #"{"carousels": [{"name": "x", "# + fields.dropFirst() + "]}"
        let located = message.replacingOccurrences(of: "(also banners", with: "(also carousels[0].banners")
        #expect(error(file) == "config/carousel.json: carousels[0]." + located)
    }

    @Test func theShippedConfigurationIsValidWithFiveBanners() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let path = root.appendingPathComponent("config/carousel.json").path
        let loaded = try configuration(
            ["--config", path], files: [path: try String(contentsOfFile: path, encoding: .utf8)])
        #expect(loaded.banners.count == 5)
        #expect(loaded.port == 8080)
        #expect(loaded.interval == .seconds(4))
        #expect(Set(loaded.banners.map(\.id)).count == 5)
    }

    @Test func readingARealFile() throws {
        let path = try temporaryFile(contents: oneBanner).path
        guard case .contents(let bytes) = FileContents.read(path) else {
            Issue.record("not read")
            return
        }
        #expect(bytes == Array(oneBanner.utf8))
        guard case .missing = FileContents.read(path + ".nope") else {
            Issue.record("a missing file is .missing")
            return
        }
        guard case .unreadable(let reason) = FileContents.read("/dev/zero") else {
            Issue.record("an endless file is refused")
            return
        }
        #expect(reason == "larger than 1 MiB")
    }
}

@Suite("One declaration per setting")
struct SettingsTableTests {
    /// The rows of docs/CONFIGURATION.md's table, cells without backticks ("" for "—").
    static func documentedRows() throws -> [[String]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/CONFIGURATION.md"), encoding: .utf8)
        return text.split(separator: "\n").filter { $0.hasPrefix("| `") || $0.hasPrefix("| —") }.map { line in
            line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map { cell in
                let trimmed = cell.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "")
                return trimmed == "—" ? "" : trimmed
            }
        }
    }

    @Test func theDocumentedTableIsTheDeclaredOne() throws {
        let documented = try Self.documentedRows().filter { !$0[0].hasPrefix("-h") }
        let declared = Setting.all.map { setting in
            [
                setting.flag.map { "\($0) \(setting.metavariable)" } ?? "", setting.variable ?? "",
                setting.field ?? "", setting.defaultValue,
            ]
        }
        #expect(documented.map { Array($0.prefix(4)) } == declared)
    }

    @Test func theUsageNamesEveryFlagAndVariable() {
        for setting in Setting.all {
            if let flag = setting.flag { #expect(Launch.usage.contains("\(flag) \(setting.metavariable)")) }
            if let variable = setting.variable { #expect(Launch.usage.contains(variable)) }
        }
    }
}

@Suite("banner-server import's message")
struct ImportSummaryTests {
    @Test func aFewNamesAreListedManyAreCounted() {
        #expect(StoreCommands.summary(of: ["lobby", "default"]) == "lobby, default")
        let many = (0..<10_000).map { "store-\($0)" }
        #expect(StoreCommands.summary(of: many) == "10000 carousels (store-0, store-1, store-2, …)")
    }
}
