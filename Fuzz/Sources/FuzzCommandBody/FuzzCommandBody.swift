// Request bodies of the commands: any bytes, under any route and content type, must give a
// command or a 4xx problem, never a crash.
import MicroHTTP

@testable import BannerService

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandBody(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let routes: [CommandRoute] = [.next, .previous, .jump, .pause, .resume]
    let contentTypes: [String?] = [
        nil, "application/json", "application/merge-patch+json; charset=utf-8", "text/plain",
    ]
    let route = routes[Int(bytes[0]) % routes.count]
    let headers = contentTypes[Int(bytes[1]) % contentTypes.count].map { [HTTPHeader("Content-Type", $0)] } ?? []
    let request = Request(method: "POST", path: "/fuzz", headers: headers, body: Array(bytes[2...]))
    do {
        _ = try CommandBody.command(for: route, request: request, bannerCount: 5)
    } catch {
        precondition([400, 415, 422].contains(error.status), "unexpected status \(error.status)")
    }
    return 0
}
