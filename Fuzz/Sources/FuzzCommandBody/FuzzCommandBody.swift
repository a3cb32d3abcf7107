// Request bodies of the commands and of the admin API: any bytes, under any such route and
// content type, must give deferred work (the change) or a 400, 415 or 422 problem, never a crash.
// Screens' reports (views, receipts) are answered at once: 204, or 400, 413, 415 or 422.
// Through the API's public handler, as libmicrohttpd calls it (from loopback, naming this host:
// admin allowed).
import BannerAPI
import Carousel
import Definitions
import Logging
import MicroHTTP
import Store
import TimeZones

private let api: BannerAPI = {
    let store = MemoryStore()
    let banners = (0..<5).map { Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png") }
    let start = Carousel(banners: banners, interval: .seconds(4), now: Timestamp(secondsSinceEpoch: 0))
    _ = try! store.create(
        CarouselDefinition(name: "default", banners: banners), anchor: start.anchor,
        by: Attribution(actor: "fuzz", at: Timestamp(secondsSinceEpoch: 0)))
    return ServiceParts(
        store: store, loaded: try! store.loadAll(), corsOrigins: [], heartbeat: .seconds(3600),
        access: AccessPolicy(controlToken: nil, adminToken: nil),
        logger: Logger(label: "fuzz", minimumLevel: .critical), clock: { Timestamp(secondsSinceEpoch: 0) }
    ).api
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let routes = [
        ("POST", "/banner/next"), ("POST", "/banner/previous"), ("PUT", "/banner/index"),
        ("POST", "/banner/pause"), ("POST", "/banner/resume"), ("POST", "/carousels"), ("PUT", "/carousels/default"),
        ("PATCH", "/carousels/default"), ("POST", "/carousels/default/banners?position=2"),
        ("PUT", "/carousels/default/banners/b1"), ("PATCH", "/carousels/default/banners/b1"),
        ("PUT", "/carousels/default/order"), ("POST", "/carousels/default/views"),
        ("POST", "/carousels/default/screens/wall-1/receipts"),
    ]
    let contentTypes: [String?] = [
        nil, "application/json", "application/merge-patch+json; charset=utf-8", "text/plain",
    ]
    let (method, path) = routes[Int(bytes[0]) % routes.count]
    // Naming this host, as a loopback client must for admin trust without a token.
    let headers =
        [HTTPHeader("Host", "localhost")]
        + (contentTypes[Int(bytes[1]) % contentTypes.count].map { [HTTPHeader("Content-Type", $0)] } ?? [])
    switch api.respond(to: Request(method: method, path: path, headers: headers, body: Array(bytes[2...]))) {
    case .deferred: break
    case .response(let answer):
        let reported = path.hasSuffix("/views") || path.hasSuffix("/receipts")
        let allowed = reported ? [204, 400, 413, 415, 422] : [400, 415, 422]
        precondition(allowed.contains(answer.status), "unexpected status \(answer.status) for \(method) \(path)")
    case .prepared(let prepared):
        // Reports taken are answered with a 204 built once (docs/PERFORMANCE.md, "What a receipt costs").
        let reported = path.hasSuffix("/views") || path.hasSuffix("/receipts")
        precondition(reported && prepared.status == 204, "\(method) \(path) answered at once with \(prepared.status)")
    case .stream:
        preconditionFailure("a command answered with a stream")
    }
    return 0
}
