import BannerService
import Carousel
import Logging
import MicroHTTP
import TestSupport

@testable import BannerAPI

/// The service as a test speaks to it. A check written against this protocol runs unchanged
/// against the handler called directly (`RouterHarness`, no sockets, a manual clock) and against
/// the whole service over HTTP (`LiveService`), as HummingbirdTesting does for its router and
/// live server: `@Test(arguments: Transport.allCases)`.
protocol TestService: Sendable {
    func request(_ method: String, _ path: String, headers: [(String, String)], body: String?) async throws
        -> HTTPResponse
    /// A request whose body is bytes (an upload).
    func request(_ method: String, _ path: String, headers: [(String, String)], bytes: [UInt8]) async throws
        -> HTTPResponse
}

extension TestService {
    func request(_ method: String, _ path: String, headers: [(String, String)] = []) async throws -> HTTPResponse {
        try await request(method, path, headers: headers, body: nil)
    }
}

/// Which way a shared check reaches the service.
enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    /// `BannerAPI.respond` called directly, on a manual clock.
    case router
    /// `banner-server`'s service on 127.0.0.1 and a free port, over raw sockets, on a fresh SQLite
    /// store.
    case live
    /// The same with fast paths off (`--fast-paths off`): libmicrohttpd listens and answers every
    /// request, as the design card draws it; the same checks hold (docs/ARCHITECTURE.md).
    case libmicrohttpd
    /// The same on a fresh database of the tests' PostgreSQL server (docs/STORE.md, several
    /// processes): the contract holds whatever the store.
    case postgres

    var description: String { rawValue }

    /// Every transport; in the unit tier the router alone (docs/TESTING.md).
    static var allCases: [Transport] { TestTier.isUnit ? [.router] : [.router, .live, .libmicrohttpd, .postgres] }

    /// The transports a feature's check can tell apart: the store behind it (the router's memory
    /// store, SQLite behind the live service, PostgreSQL). Whether the fast paths or libmicrohttpd
    /// answer changes no outcome of a route the check only reads and writes through: that the two
    /// engines answer the same is RouterTests' and DifferentialTests' to hold, and a check of what
    /// an engine does itself (reads, streams, reports, audiences, media) runs on `allCases`
    /// (docs/TESTING.md).
    static var eachStore: [Transport] { TestTier.isUnit ? [.router] : [.router, .live, .postgres] }

    /// A carousel of `banners` sample banners (an hour apart, so nothing advances by itself while
    /// the live one is checked).
    func start(banners: Int = 5, token: String? = nil, adminToken: String? = nil, corsOrigins: [String] = [])
        async throws -> any TestService
    {
        switch self {
        case .router:
            RouterHarness(
                banners: banners, interval: .seconds(3600), token: token, adminToken: adminToken,
                corsOrigins: corsOrigins)
        case .live:
            try await LiveService(banners: banners, token: token, adminToken: adminToken, corsOrigins: corsOrigins)
        case .libmicrohttpd:
            try await LiveService(
                banners: banners, token: token, adminToken: adminToken, corsOrigins: corsOrigins, fastPaths: false)
        case .postgres:
            try await LiveService(
                banners: banners, token: token, adminToken: adminToken, corsOrigins: corsOrigins,
                store: .postgres(uri: await PostgresServer.shared().createDatabase()))
        }
    }
}

extension RouterHarness: TestService {
    func request(_ method: String, _ path: String, headers: [(String, String)], body: String?) async throws
        -> HTTPResponse
    {
        try await request(method, path, headers: headers, bytes: body.map { Array($0.utf8) } ?? [])
    }

    func request(_ method: String, _ path: String, headers: [(String, String)], bytes: [UInt8]) async throws
        -> HTTPResponse
    {
        let response: Response = await send(method, path, headers: headers, bytes: bytes)
        return HTTPResponse(
            status: response.status, headers: response.headers.map { (name: $0.name, value: $0.value) },
            body: method == "HEAD" ? [] : response.body)
    }
}

extension LiveService: TestService {}

extension HTTPResponse {
    var problemDetail: String? { (try? json)?["detail"] as? String }
}
