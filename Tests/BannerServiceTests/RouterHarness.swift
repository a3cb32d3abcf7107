import Carousel
import Definitions
import Foundation
import JSON
import Logging
import MicroHTTP
import Store
import TestSupport
import TimeZones

@testable import BannerAPI
@testable import BannerService

/// 2026-11-29T20:00:00Z
let t0 = Timestamp(secondsSinceEpoch: 1_795_982_400)

func sampleBanners(_ count: Int) -> [Banner] {
    (0..<count).map {
        Banner(id: "b\($0)", image: "https://cdn.example.com/\($0).png", caption: "Banner \($0)")
    }
}

/// The API called directly, as libmicrohttpd would call it, with a carousel `default` on a
/// manual clock (its timer not started: time moves when the test says).
struct RouterHarness: Sendable {
    let clock = ManualClock(t0)
    let store: any CarouselStore
    let parts: ServiceParts
    /// The engine of `default`.
    var engine: CarouselEngine { parts.directory.carousel(named: CarouselDefinition.defaultName)!.engine }
    /// The prepared reads of `default`.
    var reads: PreparedReads { parts.directory.carousel(named: CarouselDefinition.defaultName)!.reads }
    var api: BannerAPI { parts.api }

    init(
        banners: Int = 5, interval: Duration = .seconds(4), autoplay: Bool = true, token: String? = nil,
        adminToken: String? = nil, corsOrigins: [String] = [], store: any CarouselStore = MemoryStore(),
        logger: Logger = Logger(label: "test", minimumLevel: .critical)
    ) {
        let definition = CarouselDefinition(
            name: CarouselDefinition.defaultName, interval: interval, autoplay: autoplay,
            banners: sampleBanners(banners))
        // A memory store, or a fresh file: neither fails here.
        try! StoreSeeding.importDefinitions([definition], into: store, now: t0)
        self.store = store
        parts = ServiceParts(
            store: store, loaded: try! store.loadAll(), corsOrigins: corsOrigins, heartbeat: .seconds(15),
            access: AccessPolicy(controlToken: token, adminToken: adminToken), logger: logger, clock: clock.read)
    }

    /// Another process on `other`'s store, as a replica is: it loads what is stored now and
    /// hears of nothing by itself (a memory store reports no changes): `parts.follow` tells it.
    init(replicaOf other: RouterHarness) {
        store = other.store
        parts = ServiceParts(
            store: store, loaded: try! store.loadAll(), corsOrigins: [], heartbeat: .seconds(15),
            access: AccessPolicy(controlToken: nil, adminToken: nil),
            logger: Logger(label: "test", minimumLevel: .critical), clock: clock.read)
    }

    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil,
        fromLoopback: Bool = true
    ) async -> Response {
        await send(method, path, headers: headers, bytes: body.map { Array($0.utf8) } ?? [], fromLoopback: fromLoopback)
    }

    func send(
        _ method: String, _ path: String, headers: [(String, String)] = [], bytes: [UInt8], fromLoopback: Bool = true
    ) async -> Response {
        // As a client of the service on this host would, unless the test says otherwise.
        let host = headers.contains { $0.0.lowercased() == "host" } ? [] : [HTTPHeader("Host", "localhost")]
        let request = Request(
            method: method, path: path, headers: host + headers.map { HTTPHeader($0.0, $0.1) }, body: bytes,
            fromLoopback: fromLoopback)
        switch api.respond(to: request) {
        case .response(let response): return response
        case .prepared(let prepared): return prepared.response
        case .deferred(let work, _): return await work().response
        case .stream(let stream): return Response(status: stream.status, headers: stream.headers)
        }
    }

    func sendJSON(_ method: String, _ path: String, _ json: String, headers: [(String, String)] = []) async -> Response
    {
        await send(method, path, headers: [("Content-Type", "application/json")] + headers, body: json)
    }
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Parsed with Foundation's JSONSerialization, independent of the service's own JSON code.
    /// A body that is not a JSON object is an error, not an empty object.
    var json: [String: Any] {
        get throws {
            guard let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw NotAnObject(text: text)
            }
            return object
        }
    }

    var problemDetail: String? { (try? json)?["detail"] as? String }
}

struct NotAnObject: Error, CustomStringConvertible {
    let text: String
    var description: String { "the body is not a JSON object: \(text)" }
}
