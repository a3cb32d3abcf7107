// What the service reads from request lines and headers: the route matcher (carousel names and
// banner ids in paths included), If-None-Match, Authorization, Origin and X-Request-Id (what is kept
// of it is answered back: only letters, digits and -_.:@, 128 at most), through the API's public
// handler with tokens and CORS on; and the URL and origin checks. Input: "method\npath\nheader value".
import BannerAPI
import Carousel
import Definitions
import Logging
import MicroHTTP
import Store
import TimeZones

private let api: BannerAPI = {
    let store = MemoryStore()
    let banners = [Banner(id: "a", image: "https://cdn.example.com/a.png")]
    let start = Carousel(banners: banners, interval: .seconds(4), now: Timestamp(secondsSinceEpoch: 0))
    _ = try! store.create(
        CarouselDefinition(name: "default", banners: banners), anchor: start.anchor,
        by: Attribution(actor: "fuzz", at: Timestamp(secondsSinceEpoch: 0)))
    return ServiceParts(
        store: store, loaded: try! store.loadAll(), corsOrigins: ["https://shop.example.com"],
        heartbeat: .seconds(3600), access: AccessPolicy(controlToken: "s3cret", adminToken: "s3cret"),
        logger: Logger(label: "fuzz", minimumLevel: .critical), clock: { Timestamp(secondsSinceEpoch: 0) }
    ).api
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestLine(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
    let method = parts[0]
    let path = parts.count > 1 ? parts[1] : "/"
    let value = parts.count > 2 ? parts[2] : ""
    let headers = ["If-None-Match", "Authorization", "Origin", "X-Request-Id"].map { HTTPHeader($0, value) }
    let status: Int
    switch api.respond(to: Request(method: method, path: path, headers: headers)) {
    case .response(let response):
        status = response.status
        if let id = response.headers.first(where: { $0.name == "X-Request-Id" })?.value {
            let kept = id.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || "0123456789-_.:@".unicodeScalars.contains($0))
            }
            precondition(!id.isEmpty && id.utf8.count <= 128 && kept, "a request id answered as '\(id)'")
        }
    case .prepared(let prepared): status = prepared.status
    case .deferred:
        precondition(value.contains("s3cret"), "a change passed the token check with '\(value)'")
        status = 200
    case .stream(let stream):
        status = stream.status
        stream.finish()
    }
    // With the token, a command's missing body is the client's error too.
    let allowed = [200, 204, 304, 401, 404, 405] + (value.contains("s3cret") ? [400, 415, 422] : [])
    precondition(allowed.contains(status), "unexpected status \(status)")
    _ = CORSPolicy.isValidOrigin(value)
    _ = Validation.isAbsoluteHTTPURL(value)
    _ = Validation.isBannerID(value)
    return 0
}
