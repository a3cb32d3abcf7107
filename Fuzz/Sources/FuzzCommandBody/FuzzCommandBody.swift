// Request bodies of the commands: any bytes, under any command route and content type, must give
// deferred work (the command) or a 400, 415 or 422 problem, never a crash. Through the API's
// public handler, as libmicrohttpd calls it.
import BannerAPI
import Carousel
import Logging
import MicroHTTP

private let api = ServiceParts(
    carousel: Carousel(
        banners: (0..<5).map { Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png") },
        interval: .seconds(4), autoplay: true, now: Timestamp(secondsSinceEpoch: 0)),
    corsOrigins: [], heartbeat: .seconds(3600), controlToken: nil,
    logger: Logger(label: "fuzz", minimumLevel: .critical), clock: { Timestamp(secondsSinceEpoch: 0) }
).api

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let routes = [
        ("POST", "/banner/next"), ("POST", "/banner/previous"), ("PUT", "/banner/index"),
        ("POST", "/banner/pause"), ("POST", "/banner/resume"),
    ]
    let contentTypes: [String?] = [
        nil, "application/json", "application/merge-patch+json; charset=utf-8", "text/plain",
    ]
    let (method, path) = routes[Int(bytes[0]) % routes.count]
    let headers = contentTypes[Int(bytes[1]) % contentTypes.count].map { [HTTPHeader("Content-Type", $0)] } ?? []
    switch api.respond(to: Request(method: method, path: path, headers: headers, body: Array(bytes[2...]))) {
    case .deferred: break
    case .response(let problem):
        precondition([400, 415, 422].contains(problem.status), "unexpected status \(problem.status)")
    case .prepared(let prepared):
        preconditionFailure("a command answered at once with \(prepared.status)")
    case .stream:
        preconditionFailure("a command answered with a stream")
    }
    return 0
}
