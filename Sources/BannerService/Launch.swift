import BannerAPI
import Carousel
import Definitions
import Glibc
import Logging
import Media
import Platform

/// What the command line asks for: run with a configuration, or print the usage.
public enum Launch: Equatable, Sendable {
    case run(ServiceConfiguration, notes: [String])
    /// `banner-server healthcheck`: ask the configured host and port for /healthz, then exit.
    case healthCheck(ServiceConfiguration)
    /// `banner-server import FILE`: write the file's carousels into the configured store.
    case importFile(ServiceConfiguration, definitions: [CarouselDefinition], images: [LibraryFile], from: String)
    /// `banner-server export`: print the configured store's carousels as a v2 configuration file.
    case export(ServiceConfiguration)
    case help

    public static let defaultConfigPath = "config/carousel.json"

    /// The `--help` text, from `Setting.all`.
    public static let usage: String = {
        func row(_ left: String, _ right: String) -> String {
            "  " + left + String(repeating: " ", count: max(1, 28 - left.count)) + right
        }
        let continuation = String(repeating: " ", count: 30)
        let options = Setting.all.filter { $0.flag != nil }.map { setting in
            row("\(setting.flag!) \(setting.metavariable)", setting.help) + "\n" + continuation
                + "default \(setting.defaultValue)\(setting.variable.map { "; env \($0)" } ?? "")"
        }
        let variables = Setting.all.filter { $0.flag == nil && $0.variable != nil }.map { setting in
            row(setting.variable!, setting.help) + "\n" + continuation + "default \(setting.defaultValue)"
        }
        let fileOnly = Setting.all.filter { $0.flag == nil && $0.variable == nil }.compactMap(\.field)
        return
            ([
                "Usage: banner-server [OPTIONS]",
                "       banner-server healthcheck [OPTIONS]",
                "       banner-server import FILE [OPTIONS]",
                "       banner-server export [OPTIONS]",
                "",
                "Serves banner carousels over HTTP (docs/API.md), kept in a store (docs/STORE.md). Precedence:",
                "flag > environment > file > default; every setting is described in docs/CONFIGURATION.md.",
                "",
                "Options:",
            ] + options + [
                row("-h, --help", "print this help"),
                "",
                "Environment only:",
            ] + variables + [
                "",
                "Configuration file only: \(fileOnly.joined(separator: ", ")).",
                "",
                "`banner-server healthcheck` asks the service at the configured host and port for /healthz",
                "(2 s timeout) and exits 0 when it answers ok, 1 otherwise: for a container HEALTHCHECK or a",
                "Kubernetes exec probe.",
                "",
                "`banner-server import FILE` writes the carousels FILE defines (a v1 or v2 configuration file)",
                "into the store, replacing those of the same names, in one transaction. `banner-server export`",
                "prints every carousel of the store as a v2 configuration file; export, import, export prints",
                "the same bytes. The configuration file only seeds an empty store: afterwards the store is",
                "the truth.",
            ]).joined(separator: "\n")
    }()

    /// The environment variables the service reads.
    public static let environmentVariables = Setting.all.compactMap(\.variable)

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
        readFile: (String) -> FileContents = FileContents.read,
        readImage: (String) -> FileContents = FileContents.readImage
    ) throws(ConfigurationError) -> Launch {
        let subcommand = ["healthcheck", "import", "export"].first { $0 == arguments.first }
        var rest = subcommand == nil ? arguments[...] : arguments.dropFirst()
        var importPath: String?
        if subcommand == "import" {
            guard let path = rest.first, !path.hasPrefix("-") else {
                throw ConfigurationError(
                    source: "import", message: "needs the file to import: banner-server import FILE")
            }
            importPath = path
            rest = rest.dropFirst()
        }
        let flags = try Flags.parse(Array(rest))
        if flags.help { return .help }
        var configuration = ServiceConfiguration()
        var notes: [String] = []

        let explicitPath = flags.values[Setting.config.flag!] ?? environment[Setting.config.variable!]
        let path = explicitPath ?? defaultConfigPath
        if let bytes = try contents(of: path, readFile: readFile, missingIsError: explicitPath != nil) {
            try ConfigurationFile.apply(bytes, from: path, to: &configuration, readImage: readImage)
            configuration.configurationFile = path
        } else {
            notes.append("no configuration file at \(path); starting with built-in defaults and no banners")
        }

        // Environment first, then the flag, so that the flag wins.
        for setting in Setting.all {
            guard let fromText = setting.fromText else { continue }
            let given = [
                (setting.variable, setting.variable.flatMap { environment[$0] }),
                (setting.flag, setting.flag.flatMap { flags.values[$0] }),
            ]
            for case (let source?, let value?) in given {
                do {
                    try fromText(value)(&configuration)
                } catch {
                    throw ConfigurationError(source: source, message: error.message)
                }
            }
        }
        for (variable, file) in [
            ("CAROUSEL_CONTROL_TOKEN", "CAROUSEL_CONTROL_TOKEN_FILE"),
            ("CAROUSEL_ADMIN_TOKEN", "CAROUSEL_ADMIN_TOKEN_FILE"),
        ] where environment[variable] != nil && environment[file] != nil {
            throw ConfigurationError(source: file, message: "\(variable) is set too; set one of them")
        }
        switch subcommand {
        case "healthcheck":
            return .healthCheck(configuration)
        case "export":
            return .export(configuration)
        case "import":
            let path = importPath!
            var imported = ServiceConfiguration()
            if let bytes = try contents(of: path, readFile: readFile, missingIsError: true) {
                try ConfigurationFile.apply(bytes, from: path, to: &imported, readImage: readImage)
            }
            return .importFile(
                configuration, definitions: imported.definitions, images: imported.libraryFiles, from: path)
        default:
            return .run(configuration, notes: notes)
        }
    }
}

extension Launch {
    /// A configuration file's bytes; nil when it is missing and that is allowed.
    fileprivate static func contents(
        of path: String, readFile: (String) -> FileContents, missingIsError: Bool
    ) throws(ConfigurationError) -> [UInt8]? {
        switch readFile(path) {
        case .contents(let bytes): return bytes
        case .missing where !missingIsError: return nil
        case .missing: throw ConfigurationError(source: path, message: "no such file")
        case .unreadable(let reason): throw ConfigurationError(source: path, message: "cannot read: \(reason)")
        }
    }
}

/// The command-line flags, as given: `--name value` or `--name=value`.
struct Flags {
    static let valued = Setting.all.compactMap(\.flag)
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
        read(path, limit: 1 << 20)
    }

    /// An image beside the configuration (`LibraryFiles`): as large as an upload may be.
    public static func readImage(_ path: String) -> FileContents {
        read(path, limit: MediaLimits().maxBytes)
    }

    private static func read(_ path: String, limit: Int) -> FileContents {
        switch SmallFile.read(path, limit: limit) {
        case .success(let bytes): .contents(bytes)
        case .failure(let error) where error.code == ENOENT: .missing
        case .failure(let error): .unreadable(error.code == EFBIG ? "larger than \(limit >> 20) MiB" : error.message)
        }
    }
}
