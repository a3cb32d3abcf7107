// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "banner-carousel",
    products: [
        .executable(name: "banner-server", targets: ["banner-server"]),
        // For the fuzz targets in Fuzz/, a package of their own.
        .library(name: "BannerService", targets: ["BannerService"]),
    ],
    targets: [
        // libmicrohttpd from Debian (`libmicrohttpd-dev`), found with pkg-config.
        .systemLibrary(
            name: "CMicroHTTPD",
            pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"])]
        ),
        // A lock ThreadSanitizer can see; its pthread mutex is the one other unsafe pointer.
        .target(name: "Locking"),
        // The only module that imports CMicroHTTPD and the only one with unsafe pointers.
        .target(name: "MicroHTTP", dependencies: ["CMicroHTTPD", "Locking"]),
        // The domain: banners, the pure Carousel state machine and the engine actor.
        .target(name: "Carousel", dependencies: ["Locking"]),
        // The application: configuration, routes, JSON, errors, logging.
        .target(name: "BannerService", dependencies: ["Carousel", "MicroHTTP", "Locking"]),
        .executableTarget(name: "banner-server", dependencies: ["BannerService"]),

        // Shared by the tests: a raw-socket HTTP/1.1 client, a child-process runner, a manual clock.
        .target(name: "TestSupport", dependencies: ["Carousel", "Locking"], path: "Tests/TestSupport"),
        .testTarget(name: "CarouselTests", dependencies: ["Carousel", "Locking", "TestSupport"]),
        .testTarget(name: "MicroHTTPTests", dependencies: ["MicroHTTP", "Locking", "TestSupport"]),
        .testTarget(
            name: "BannerServiceTests",
            dependencies: ["BannerService", "Carousel", "MicroHTTP", "TestSupport"]
        ),
        .testTarget(
            name: "BannerServerTests",
            dependencies: ["banner-server", "TestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
