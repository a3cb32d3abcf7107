// swift-tools-version:6.0
// libFuzzer targets for the parsers that read untrusted bytes. A package of its own because a
// fuzz target has no `main` (libFuzzer brings it), which the main package's builds would refuse.
// Built and run by `make fuzz` in the parent folder, which links ../.build/fuzz/banner-carousel
// to the main package: a path dependency is known by its folder's name, and a clone's folder
// may be called anything.
import PackageDescription

let package = Package(
    name: "banner-carousel-fuzz",
    dependencies: [.package(path: "../.build/fuzz/banner-carousel")],
    targets: [
        .executableTarget(
            name: "FuzzCommandBody", dependencies: [.product(name: "BannerService", package: "banner-carousel")]),
        .executableTarget(
            name: "FuzzConfiguration", dependencies: [.product(name: "BannerService", package: "banner-carousel")]),
        .executableTarget(
            name: "FuzzRequestLine", dependencies: [.product(name: "BannerService", package: "banner-carousel")]),
    ],
    swiftLanguageModes: [.v6]
)
