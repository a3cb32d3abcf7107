// What the service reads from request lines and headers: the route matcher, If-None-Match,
// Authorization, Origin and URL checks. Input: "method\npath\nheader value".
@testable import BannerService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let method = parts[0]
    let path = parts.count > 1 ? parts[1] : "/"
    let value = parts.count > 2 ? parts[2] : ""
    for preflight in [false, true] {
        do {
            _ = try Routes.resolve(method: method, path: path, preflight: preflight)
        } catch {
            precondition([404, 405].contains(error.status))
        }
    }
    _ = EntityTag.matches(value, "\"abc-1-banner\"")
    _ = ControlToken("s3cret").authorizes(value)
    _ = CORSPolicy.isValidOrigin(value)
    _ = CORSPolicy(origins: ["https://shop.example.com"]).allowedOrigin(for: value)
    _ = Validation.isAbsoluteHTTPURL(value)
    _ = Validation.isBannerID(value)
    return 0
}
