// swift-tools-version:6.1
// libFuzzer targets for the parsers that read untrusted bytes. A package of its own because a
// fuzz target has no `main` (libFuzzer brings it), which the main package's builds would refuse.
// It compiles the service's modules from their sources (`Modules` is a link to ../Sources), so
// the main package needs no library product for it, and the targets use only public interfaces.
// Built and run by `make fuzz` in the parent folder.
import PackageDescription

let package = Package(
    name: "banner-carousel-fuzz",
    targets: [
        .executableTarget(
            name: "EmbedFiles", path: "Modules/EmbedFiles", swiftSettings: [.define("LIBFUZZER_MAIN")]),
        .plugin(
            name: "EmbedFilesPlugin", capability: .buildTool(), dependencies: ["EmbedFiles"],
            path: "Modules/EmbedFilesPlugin"),
        .systemLibrary(name: "CMicroHTTPD", path: "Modules/CMicroHTTPD", pkgConfig: "libmicrohttpd"),
        .target(name: "Platform", path: "Modules/Platform"),
        .target(name: "Threading", dependencies: ["Platform"], path: "Modules/Threading"),
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "Threading", "Platform"], path: "Modules/MicroHTTP"),
        .target(name: "JSON", path: "Modules/JSON"),
        .target(name: "TimeZones", dependencies: ["Threading", "Platform"], path: "Modules/TimeZones"),
        .target(name: "Carousel", dependencies: ["Threading", "TimeZones"], path: "Modules/Carousel"),
        .target(name: "Definitions", dependencies: ["Carousel", "JSON", "TimeZones"], path: "Modules/Definitions"),
        .target(name: "Digest", dependencies: ["Threading"], path: "Modules/Digest"),
        .target(
            name: "Store", dependencies: ["Carousel", "Definitions", "Digest", "JSON", "Threading", "TimeZones"],
            path: "Modules/Store"),
        .systemLibrary(name: "CSQLite", path: "Modules/CSQLite", pkgConfig: "sqlite3"),
        .target(
            name: "SQLiteStore",
            dependencies: [
                "CSQLite", "Carousel", "Definitions", "JSON", "Store", "Threading", "Platform", "TimeZones",
            ],
            path: "Modules/SQLiteStore"),
        .systemLibrary(name: "CPostgres", path: "Modules/CPostgres"),
        .target(
            name: "PostgresStore",
            dependencies: ["CPostgres", "Carousel", "Definitions", "Store", "Threading", "Platform", "TimeZones"],
            path: "Modules/PostgresStore"),
        .target(name: "Logging", dependencies: ["TimeZones", "Platform"], path: "Modules/Logging"),
        .target(name: "Metrics", dependencies: ["Threading", "Platform", "TimeZones"], path: "Modules/Metrics"),
        .target(
            name: "CarouselRuntime",
            dependencies: [
                "Carousel", "Definitions", "Digest", "JSON", "Store", "Threading", "Logging", "Media", "Metrics",
                "TimeZones",
            ],
            path: "Modules/CarouselRuntime"),
        .systemLibrary(name: "CVips", path: "Modules/CVips"),
        .target(name: "Media", dependencies: ["CVips", "Definitions", "Digest", "Threading"], path: "Modules/Media"),
        .target(name: "WebClient", path: "Modules/WebClient", exclude: ["web"], plugins: ["EmbedFilesPlugin"]),
        .target(name: "Webhooks", path: "Modules/Webhooks"),
        .target(
            name: "BannerAPI",
            dependencies: [
                "Threading", "MicroHTTP", "JSON", "Carousel", "Definitions", "Store", "Logging", "WebClient",
                "TimeZones",
                "Platform", "Metrics", "CarouselRuntime", "Media", "Webhooks", "Digest",
            ],
            path: "Modules/BannerAPI", exclude: ["Resources"], plugins: ["EmbedFilesPlugin"]),
        .target(
            name: "BannerService",
            dependencies: [
                "Threading", "MicroHTTP", "JSON", "Carousel", "Definitions", "Store", "SQLiteStore", "PostgresStore",
                "Logging", "BannerAPI", "Platform", "CarouselRuntime", "WebhookSender", "TimeZones", "Media", "Digest",
            ],
            path: "Modules/BannerService"),
        .systemLibrary(name: "CCurl", path: "Modules/CCurl"),
        .target(
            name: "WebhookSender", dependencies: ["CCurl", "Digest", "Store", "TimeZones", "Webhooks"],
            path: "Modules/WebhookSender"),
        .executableTarget(
            name: "FuzzCommandBody",
            dependencies: ["BannerAPI", "Carousel", "Definitions", "Store", "Logging", "MicroHTTP"]),
        .executableTarget(
            name: "FuzzConfiguration", dependencies: ["BannerService", "BannerAPI", "Definitions", "Carousel"]),
        .executableTarget(name: "FuzzMediaUpload", dependencies: ["Media"]),
        .executableTarget(
            name: "FuzzMediaRequests",
            dependencies: ["BannerAPI", "Carousel", "Definitions", "Store", "Logging", "MicroHTTP", "TimeZones"]),
        .executableTarget(name: "FuzzWebhookURL", dependencies: ["Webhooks", "CCurl"]),
        .executableTarget(name: "FuzzJSON", dependencies: ["JSON"]),
        .executableTarget(name: "FuzzRequestHead", dependencies: ["MicroHTTP", "Threading", "Platform"]),
        .executableTarget(name: "FuzzQueryString", dependencies: ["CMicroHTTPD", "MicroHTTP"]),
        .executableTarget(
            name: "FuzzRequestLine",
            dependencies: ["BannerAPI", "Definitions", "Store", "Carousel", "Logging", "MicroHTTP"]),
    ],
    swiftLanguageModes: [.v6]
)
