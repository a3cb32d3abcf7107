// The media library's hand-written request parsers, through the API's public handler: a
// multipart form (the admin page's upload) or a raw upload of any bytes must be deferred work (a
// decode) or a 400, 413, 415 or 422 at once, never a crash; a Range header of any bytes on a
// stored image must give 200, 206 (its Content-Range and body agreeing with the file), 304 or 416.
import BannerAPI
import Carousel
import Definitions
import Dispatch
import Logging
import MicroHTTP
import Store
import TimeZones

/// A PNG of 2 × 2 pixels, stored once at start: the file ranges are read from.
private let png: [UInt8] = [
    0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48,
    0x44, 0x52, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00,
    0x00, 0xFD, 0xD4, 0x9A, 0x73, 0x00, 0x00, 0x00, 0x09, 0x70, 0x48, 0x59, 0x73, 0x00,
    0x00, 0x03, 0xE8, 0x00, 0x00, 0x03, 0xE8, 0x01, 0xB5, 0x7B, 0x52, 0x6B, 0x00, 0x00,
    0x00, 0x10, 0x49, 0x44, 0x41, 0x54, 0x08, 0x99, 0x63, 0x38, 0xC1, 0xC5, 0x05, 0x44,
    0x0C, 0x10, 0x0A, 0x00, 0x1B, 0x16, 0x03, 0x71, 0xD4, 0xAD, 0x63, 0xD6, 0x00, 0x00,
    0x00, 0x00, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
]

private func answer(_ reply: Reply) -> PreparedResponse? {
    switch reply {
    case .response(let response): return PreparedResponse(response)
    case .prepared(let prepared): return prepared
    case .deferred(let work, _):
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: PreparedResponse?
        Task {
            result = await work()
            done.signal()
        }
        done.wait()
        return result
    case .stream: return nil
    }
}

private let host = HTTPHeader("Host", "localhost")

private let (api, fileID): (BannerAPI, String) = {
    let store = MemoryStore()
    let banners = [Banner(id: "b0", image: "https://cdn.example.com/0.png")]
    let start = Carousel(banners: banners, interval: .seconds(4), now: Timestamp(secondsSinceEpoch: 0))
    _ = try! store.create(
        CarouselDefinition(name: "default", banners: banners), anchor: start.anchor,
        by: Attribution(actor: "fuzz", at: Timestamp(secondsSinceEpoch: 0)))
    let api = ServiceParts(
        store: store, loaded: try! store.loadAll(), corsOrigins: [], heartbeat: .seconds(3600),
        access: AccessPolicy(controlToken: nil, adminToken: nil),
        logger: Logger(label: "fuzz", minimumLevel: .critical), clock: { Timestamp(secondsSinceEpoch: 0) }
    ).api
    let stored = answer(
        api.respond(
            to: Request(
                method: "POST", path: "/media", headers: [host, HTTPHeader("Content-Type", "image/png")], body: png)))
    precondition(stored?.status == 201, "the fixture was not stored: \(stored?.status ?? 0)")
    let body = String(decoding: stored!.body, as: UTF8.self)
    let id = String(body.split(separator: "\"")[3])
    return (api, id)
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMediaRequests(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard bytes.count >= 2 else { return 0 }
    let rest = Array(bytes[2...])
    switch bytes[0] % 3 {
    case 0:
        // A form: the boundary from the input's first line, the body the rest.
        let split = rest.firstIndex(of: 0x0A) ?? rest.count
        let boundary = String(decoding: rest[..<split], as: UTF8.self)
        let body = Array(rest[min(split + 1, rest.count)...])
        let type =
            bytes[1] % 2 == 0
            ? "multipart/form-data; boundary=\(boundary)" : "multipart/form-data; boundary=\"\(boundary)\""
        upload(body, type: type)
    case 1:
        let types = ["image/png", "image/jpeg", "application/octet-stream", "image/svg+xml", "text/plain"]
        upload(rest, type: types[Int(bytes[1]) % types.count])
    default:
        let range = String(decoding: rest, as: UTF8.self)
        let headers =
            [host, HTTPHeader("Range", range)] + (bytes[1] % 2 == 0 ? [] : [HTTPHeader("If-Range", "\"\(fileID)\"")])
        guard let file = answer(api.respond(to: Request(method: "GET", path: "/media/\(fileID)", headers: headers)))
        else { preconditionFailure("a file answered with a stream") }
        precondition([200, 206, 416].contains(file.status), "GET with Range: \(range) answered \(file.status)")
        if file.status == 206 {
            let contentRange = file.headers.first { $0.name == "Content-Range" }!.value
            let bounds = contentRange.dropFirst("bytes ".count).split(separator: "/")[0].split(separator: "-")
            let (first, last) = (Int(bounds[0])!, Int(bounds[1])!)
            precondition(first <= last && last < png.count, "Content-Range \(contentRange) outside the file")
            precondition(file.body == Array(png[first...last]), "206 body is not bytes \(first)-\(last)")
        }
    }
    return 0
}

private func upload(_ body: [UInt8], type: String) {
    let reply = api.respond(
        to: Request(method: "POST", path: "/media", headers: [host, HTTPHeader("Content-Type", type)], body: body))
    switch reply {
    case .deferred: break  // checked on the request thread, decoded later: FuzzMediaUpload's part
    case .response(let response):
        precondition([400, 413, 415, 422].contains(response.status), "upload answered \(response.status) at once")
    case .prepared(let prepared): preconditionFailure("an upload answered \(prepared.status) prepared")
    case .stream: preconditionFailure("an upload answered with a stream")
    }
}
