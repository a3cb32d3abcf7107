// Configuration files: any bytes must be refused with a message or give a configuration the
// carousel accepts (its initializer checks intervals and durations with preconditions).
import Carousel

@testable import BannerService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    var configuration = ServiceConfiguration()
    do {
        try ConfigurationFile.apply(bytes, from: "fuzz.json", to: &configuration)
    } catch {
        precondition(!error.description.isEmpty)
        return 0
    }
    _ = Carousel(
        banners: configuration.banners, interval: configuration.interval, autoplay: configuration.autoplay,
        now: Timestamp(secondsSinceEpoch: 0))
    precondition(configuration.banners.allSatisfy { Validation.isBannerID($0.id) })
    return 0
}
