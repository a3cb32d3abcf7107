// Configuration files: any bytes must be refused with a message naming the file, or give a
// configuration the carousel accepts (its initializer checks intervals and durations with
// preconditions). Through the public launch parser, the file read replaced by the input.
import BannerAPI
import BannerService
import Carousel
import Definitions
import TimeZones

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let configuration: ServiceConfiguration
    do {
        let launch = try Launch.parse(
            arguments: ["--config", "fuzz.json"], environment: [:], readFile: { _ in .contents(bytes) })
        guard case .run(let parsed, _) = launch else { preconditionFailure("not a run: \(launch)") }
        configuration = parsed
    } catch {
        precondition(error.source == "fuzz.json" && !error.message.isEmpty, "\(error)")
        return 0
    }
    _ = Carousel(
        banners: configuration.banners, interval: configuration.interval, autoplay: configuration.autoplay,
        now: Timestamp(secondsSinceEpoch: 0))
    precondition(configuration.banners.allSatisfy { Validation.isBannerID($0.id) })
    return 0
}
