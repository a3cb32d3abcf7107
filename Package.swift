// swift-tools-version:6.1
import PackageDescription

// Modules, lowest first; each uses only modules above it (docs/ARCHITECTURE.md says what lives
// where and why).
let package = Package(
    name: "banner-carousel",
    products: [
        .executable(name: "banner-server", targets: ["banner-server"])
    ],
    targets: [
        // Text files compiled in as string literals (the web client, the OpenAPI document): the tool
        // that writes them and the build plugin that runs it (SwiftPM's `.embedInCode` writes byte
        // arrays, minutes of a build).
        .executableTarget(name: "EmbedFiles"),
        .plugin(
            name: "EmbedFilesPlugin", capability: .buildTool(), dependencies: ["EmbedFiles"],
            path: "Sources/EmbedFilesPlugin"),
        // libmicrohttpd from Debian (`libmicrohttpd-dev`), found with pkg-config.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // What this process reads of the system: small files whole, its own resource use (/proc); system
        // calls with EINTR retried in one place and errno as a typed error (`systemCall`, `Errno`);
        // descriptors closed exactly once (`FileDescriptor`).
        .target(name: "Platform"),
        // Concurrency primitives: a lock ThreadSanitizer can see, executors for code that may block,
        // counters each thread writes alone. Their pthread calls are the one other unsafe pointer.
        .target(name: "Threading", dependencies: ["Platform"]),
        // HTTP server over libmicrohttpd; the only module that imports CMicroHTTPD. Knows nothing of carousels.
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "Threading", "Platform"]),
        // Strict JSON reading and writing; knows nothing of carousels.
        .target(name: "JSON"),
        // Time as the service reads and writes it: timestamps (integer nanoseconds), RFC 3339, calendar
        // dates and IANA time zones from the system's tzdata (TZif files).
        .target(name: "TimeZones", dependencies: ["Threading", "Platform"]),
        // The domain: banners, schedules, the pure Carousel state machine, the engine actor.
        .target(name: "Carousel", dependencies: ["Threading", "TimeZones"]),
        // What operators edit: carousel definitions and banners, their rules, JSON and messages.
        .target(name: "Definitions", dependencies: ["Carousel", "JSON", "TimeZones"]),
        // SHA-256, for content addresses (media ids).
        .target(name: "Digest", dependencies: ["Threading"]),
        // The store protocol and its records; the memory store.
        .target(name: "Store", dependencies: ["Carousel", "Definitions", "Digest", "JSON", "Threading", "TimeZones"]),
        // SQLite from Debian (`libsqlite3-dev`), found with pkg-config.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The SQLite store, the embedded default; the only module that imports CSQLite.
        .target(
            name: "SQLiteStore",
            dependencies: ["CSQLite", "Carousel", "Definitions", "JSON", "Store", "Threading", "Platform", "TimeZones"]),
        // libpq from Debian (`libpq-dev` for its header, `libpq5` at run time), opened with a store
        // on PostgreSQL.
        .systemLibrary(name: "CPostgres", providers: [.apt(["libpq-dev"])]),
        // The PostgreSQL store, for several replicas; the only module that imports CPostgres.
        .target(
            name: "PostgresStore",
            dependencies: ["CPostgres", "Carousel", "Definitions", "Store", "Threading", "Platform", "TimeZones"]),
        // libvips from Debian (`libvips42`), opened on first use: decoding and resizing uploads.
        .systemLibrary(name: "CVips", providers: [.apt(["libvips42"])]),
        // Uploaded images (docs/MEDIA.md): formats told by their bytes, headers read before decoding,
        // metadata stripped, WebP variants made with libvips; the only module that imports CVips.
        .target(name: "Media", dependencies: ["CVips", "Definitions", "Digest", "Threading"]),
        // What `GET /metrics` reports beside HTTP requests: carousel changes, timer lateness, plays, the
        // store's operations, the process; counters and their Prometheus text, no HTTP.
        .target(name: "Metrics", dependencies: ["Threading", "Platform", "TimeZones"]),
        // The value-type logger every layer is handed.
        .target(name: "Logging", dependencies: ["TimeZones", "Platform"]),
        // The carousels in service, apart from HTTP: live carousels (engine, group commit, write then
        // publish to an outlet), their directory, proof of play, the timed store, the store follower.
        .target(
            name: "CarouselRuntime",
            dependencies: [
                "Carousel", "Definitions", "Digest", "JSON", "Store", "Threading", "Logging", "Media", "Metrics",
                "TimeZones",
            ]),
        // The web client's files, compiled in.
        .target(name: "WebClient", exclude: ["web"], plugins: ["EmbedFilesPlugin"]),
        // Webhooks (docs/WEBHOOKS.md): their URLs read and their addresses checked (only public
        // ones unless allowed).
        .target(name: "Webhooks"),
        // libcurl from Debian (`libcurl4-openssl-dev` for its header, `libcurl4` at run time),
        // opened at the first delivery: HTTP and HTTPS for webhook deliveries.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // Sends one webhook delivery, signed, to an address checked as it connects; the only
        // module that imports CCurl.
        .target(name: "WebhookSender", dependencies: ["CCurl", "Digest", "Store", "TimeZones", "Webhooks"]),
        // The HTTP API: routes, handlers, problems, auth, CORS, representations, event streams.
        .target(
            name: "BannerAPI",
            dependencies: [
                "Threading", "MicroHTTP", "JSON", "Carousel", "Definitions", "Store", "Logging", "WebClient",
                "TimeZones",
                "Platform", "Metrics", "CarouselRuntime", "Media", "Webhooks", "Digest",
            ],
            exclude: ["Resources"], plugins: ["EmbedFilesPlugin"]
        ),
        // Wiring: settings, configuration, launch, signals, the health-check client.
        .target(
            name: "BannerService",
            dependencies: [
                "Threading", "MicroHTTP", "JSON", "Carousel", "Definitions", "Store", "SQLiteStore", "PostgresStore",
                "Logging", "BannerAPI", "Platform", "CarouselRuntime", "WebhookSender", "TimeZones", "Media", "Digest",
            ]
        ),
        .executableTarget(name: "banner-server", dependencies: ["BannerService", "Logging"]),

        // Shared by the tests: a raw-socket HTTP/1.1 client, a child-process runner, a manual clock.
        .target(name: "TestSupport", dependencies: ["Carousel", "Threading", "TimeZones"], path: "Tests/TestSupport"),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading"]),
        .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
        .testTarget(name: "TimeZonesTests", dependencies: ["TimeZones"]),
        .testTarget(name: "CarouselTests", dependencies: ["Carousel", "Threading", "TestSupport", "TimeZones"]),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "Threading", "TestSupport"]),
        .testTarget(name: "JSONTests", dependencies: ["JSON"]),
        .testTarget(name: "DigestTests", dependencies: ["Digest", "TestSupport"]),
        .testTarget(name: "WebhooksTests", dependencies: ["Webhooks"]),
        .testTarget(
            name: "WebhookSenderTests",
            dependencies: ["WebhookSender", "CCurl", "Webhooks", "Store", "TestSupport", "TimeZones"]),
        .testTarget(name: "MediaTests", dependencies: ["Media", "Digest", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "StoreTests",
            dependencies: [
                "Store", "SQLiteStore", "PostgresStore", "Definitions", "Carousel", "JSON", "TestSupport", "TimeZones",
            ]
        ),
        .testTarget(
            name: "CarouselRuntimeTests",
            dependencies: [
                "CarouselRuntime", "Carousel", "Definitions", "Store", "SQLiteStore", "Threading", "Logging", "Metrics",
                "TestSupport", "TimeZones",
            ]
        ),
        .testTarget(
            name: "BannerServiceTests",
            dependencies: [
                "BannerService", "BannerAPI", "JSON", "Carousel", "Definitions", "Store", "SQLiteStore", "Logging",
                "MicroHTTP", "WebClient", "TestSupport", "Metrics", "CarouselRuntime", "TimeZones", "Threading",
                "Digest",
            ]
        ),
        // The repository's documents held to the code (docs/ARCHITECTURE.md's module table).
        .testTarget(name: "RepositoryTests", dependencies: ["TestSupport"]),
        .testTarget(
            name: "BannerServerTests",
            dependencies: ["banner-server", "Threading", "SQLiteStore", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
