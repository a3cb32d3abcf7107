import Foundation
import TestSupport
import Testing

/// The fast paths must be invisible (docs/ARCHITECTURE.md, "The fast paths"): the same bytes
/// sent to a service with them on and to one with them off get the same bytes back, `Date` aside.
/// Both services share one PostgreSQL database, so their carousels, versions and ETags are the
/// same (docs/STORE.md: the state is a function of what is stored and the time).
@Suite("Fast paths on and off answer the same bytes")
struct DifferentialTests {
    static let shop = "https://shop.example.com"
    /// Ends a connection the case left open, so that the answer is everything until it closes.
    static let last = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"

    /// A case: what to send, in the pieces written one after another, and, for a stream that
    /// stays open, when enough has come.
    struct Exchange: Sendable, CustomStringConvertible {
        let name: String
        let pieces: [[UInt8]]
        var stream = false
        var description: String { name }

        init(_ name: String, _ pieces: String..., stream: Bool = false) {
            self.name = name
            self.pieces = pieces.map { Array($0.utf8) }
            self.stream = stream
        }

        init(_ name: String, bytes: [UInt8]) {
            self.name = name
            pieces = [bytes]
        }
    }

    static func head(_ target: String, _ headers: String = "", method: String = "GET") -> String {
        "\(method) \(target) HTTP/1.1\r\nHost: x\r\n\(headers)\r\n"
    }

    /// A POST with `body` and its Content-Length (and `headers` before it).
    static func post(_ target: String, _ body: String, _ headers: String = "") -> String {
        "POST \(target) HTTP/1.1\r\nHost: x\r\n\(headers)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static let receiptsPath = "/carousels/default/screens/wall-1/receipts"

    /// A head of exactly `size` bytes, padded with a header.
    static func head(ofSize size: Int) -> String {
        let start = "GET /banner HTTP/1.1\r\nHost: x\r\nX-Pad: "
        return start + String(repeating: "p", count: size - start.utf8.count - 4) + "\r\n\r\n"
    }

    static let exchanges: [Exchange] = [
        Exchange("a read", head("/banner") + last),
        Exchange("reads of every kind", head("/banners") + head("/banner/index") + head("/carousels/default") + last),
        Exchange("HEAD", head("/banners", method: "HEAD") + last),
        Exchange("a query string", head("/carousels/default/timeline?limit=2") + head("/banner?x=1&y") + last),
        // Audiences (docs/AUDIENCES.md): a name no banner names, refused names (an empty one, an
        // upper case one), a percent-encoded one (left to libmicrohttpd), one after another parameter.
        Exchange(
            "audiences",
            head("/banner?audience=de") + head("/banner?audience=") + head("/banners?audience=DE")
                + head("/banner?audience=%64e") + head("/banner/index?x=1&audience=de") + last),
        Exchange("an event stream of an audience", head("/banner/events?audience=de"), stream: true),
        Exchange(
            "a page of carousels, and a refused limit",
            head("/carousels?limit=1") + head("/carousels?limit=1&after=default") + head("/carousels?limit=0") + last),
        Exchange(
            "reads naming a screen, and an invalid one",
            head("/banner?screen=wall-1") + head("/banners", "X-Screen-Id: desk.2\r\n")
                + head("/banner?screen=Wall") + head("/banner", "X-Screen-Id: -a\r\n") + last),
        Exchange(
            "CORS", head("/banner", "Origin: \(shop)\r\n") + head("/banner", "Origin: https://evil.example\r\n") + last),
        Exchange(
            "a CORS preflight",
            head("/banner/next", "Origin: \(shop)\r\nAccess-Control-Request-Method: POST\r\n", method: "OPTIONS")
                + last),
        Exchange("404 and 405", head("/nope") + head("/banner", method: "DELETE") + last),
        Exchange(
            "webhooks, none yet",
            head("/webhooks") + head("/webhooks/7") + head("/webhooks/x", method: "HEAD")
                + head("/webhooks/7/deliveries?limit=5") + head("/webhooks/7/deliveries", method: "HEAD")
                + head("/webhooks/7/deliveries?limit=0") + last),
        Exchange("pipelined", head("/banner") + head("/banners") + head("/nope") + last),
        Exchange("a head in pieces", "GET /ban", "ner HTTP/1.1\r\nHo", "st: x\r\n", "\r\n" + last),
        Exchange("Connection: close", head("/banner", "Connection: close\r\n")),
        Exchange("HTTP/1.0", "GET /banner HTTP/1.0\r\n\r\n"),
        Exchange("HTTP/1.0 keep-alive", "GET /banner HTTP/1.0\r\nConnection: keep-alive\r\n\r\n" + last),
        Exchange("no Host", "GET /banner HTTP/1.1\r\n\r\n"),
        Exchange("two Hosts", "GET /banner HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"),
        Exchange("a GET with a body", head("/banner", "Content-Length: 5\r\n") + "hello" + last),
        Exchange("a chunked GET", head("/banner", "Transfer-Encoding: chunked\r\n") + "5\r\nhello\r\n0\r\n\r\n" + last),
        Exchange("bare LF", "GET /banner HTTP/1.1\nHost: x\n\n" + last),
        Exchange("obs-fold", head("/banner", "X-A: a\r\n b\r\n") + last),
        Exchange("a space before the colon", head("/banner", "Content-Length : 5\r\n") + "hello" + last),
        Exchange("absolute form", head("http://localhost:8080/banner") + last),
        Exchange("Expect", head("/banner", "Expect: 100-continue\r\n") + last),
        Exchange("Upgrade", head("/banner", "Upgrade: websocket\r\nConnection: Upgrade\r\n") + last),
        Exchange("NUL in the target", "GET /healthz\0/../banner HTTP/1.1\r\nHost: x\r\n\r\n"),
        Exchange("a NUL in a header", head("/banner", "X-A: a\0b\r\n") + last),
        Exchange(
            "non-ASCII bytes",
            bytes: Array("GET /banner?q=".utf8) + [0xC3, 0xA9] + Array(" HTTP/1.1\r\nHost: x\r\nX-A: ".utf8)
                + [0xFF, 0xFE] + Array("\r\n\r\n".utf8) + Array(last.utf8)),
        Exchange("a head just under 8 KiB", head(ofSize: 8191) + last),
        Exchange("a head of 8 KiB", head(ofSize: 8192) + last),
        Exchange("a head just over 8 KiB", head(ofSize: 8193) + last),
        Exchange("a head over libmicrohttpd's limit", head(ofSize: 12000) + last),
        // Near the end of libmicrohttpd's pool: a record per parameter (RequestHead.recordCost).
        Exchange(
            "many query parameters", head("/banner?" + Array(repeating: "a", count: 235).joined(separator: "&")) + last),
        Exchange(
            "reports refused",
            post(receiptsPath, "{\"receipts\": 1}") + post(receiptsPath, "{") + post(receiptsPath, "")
                + post("/carousels/default/screens/Wall/receipts", "{}") + post("/carousels/nope/views", "{}")
                + post(
                    "/carousels/default/views", "{\"views\": [{\"banner\": \"welcome\"}]}",
                    "Content-Type: text/plain\r\n")
                + last),
        Exchange("a POST of a command", post("/banner/nope", "{}") + last),
        // Commands a read loop reads (docs/ARCHITECTURE.md, "Commands outside libmicrohttpd"),
        // each refused before it runs, one sent without Content-Length (no body).
        Exchange(
            "commands refused",
            post("/banner/next", "{\"x\": 1}", "Content-Type: application/json\r\nX-Request-Id: d-1\r\n")
                + "POST /carousels/nope/next HTTP/1.1\r\nHost: x\r\nX-Request-Id: d-2\r\n\r\n"
                + post("/banner/pause", "{\"seconds\": -1}", "Content-Type: application/json\r\nX-Request-Id: d-3\r\n")
                + post("/banner/pause", "{", "Content-Type: application/json\r\nX-Request-Id: d-4\r\n") + last),
        Exchange(
            "a report in pieces", "POST \(receiptsPath) HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n", "{",
            "}" + last),
        Exchange(
            "a report's odd framing",
            "POST \(receiptsPath) HTTP/1.1\r\nHost: x\r\nContent-Length: 02\r\n\r\n{}" + last),
        Exchange(
            "a chunked report",
            "POST \(receiptsPath) HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n" + last),
        Exchange(
            "a report over the body limit",
            post(receiptsPath, "{\"receipts\": [" + String(repeating: " ", count: 17000) + "]}")),
        Exchange("a report expecting 100-continue", post(receiptsPath, "{}", "Expect: 100-continue\r\n") + last),
        Exchange("an event stream", head("/banner/events"), stream: true),
        Exchange(
            "an event stream with CORS", head("/carousels/default/banner/events", "Origin: \(shop)\r\n"), stream: true),
        Exchange("a refused event stream", head("/carousels/nope/banner/events") + last),
        Exchange("an event stream after a read", head("/banner") + head("/banner/events"), stream: true),
        // Every public GET, on one keep-alive connection (not /time and /metrics, whose bodies are
        // each service's own): the page's files and the OpenAPI document too.
        Exchange(
            "the page's files",
            ["/", "/openapi.json", "/app.js", "/embed.js", "/sw.js", "/admin", "/admin.js", "/embed-demo.html"]
                .map { head($0) }.joined() + last),
        Exchange(
            "every public read",
            [
                "/healthz", "/readyz", "/carousels", "/carousels/default", "/carousels/default/banners/b0",
                "/carousels/default/timeline", "/carousels/default/preview", "/carousels/default/",
                "/carousels/default/banner", "/carousels/default/banners", "/carousels/default/banner/index",
            ].map { head($0) }.joined() + last),
    ]

    /// One pair of services for every case (a pair per case would hold hundreds of PostgreSQL
    /// connections at once); each case on connections of its own.
    @Test func theSameBytesGetTheSameAnswer() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let fast = try await LiveService(corsOrigins: [Self.shop], store: .postgres(uri: database), fastPaths: true)
        let plain = try await LiveService(corsOrigins: [Self.shop], store: .postgres(uri: database), fastPaths: false)
        let tag = try #require(try await fast.request("GET", "/banner").header("ETag"))
        let conditional = Exchange(
            "a conditional read",
            Self.head("/banner", "If-None-Match: \(tag)\r\n") + Self.head("/banner", "If-None-Match: \"old\"\r\n")
                + Self.last)
        // A receipt and a view true now, on either service: the same answers, 204.
        let now = ISO8601DateFormatter().string(from: Date())
        let reports = Exchange(
            "reports taken",
            Self.post(
                Self.receiptsPath, "{\"receipts\": [{\"version\": 1, \"banner\": \"b0\", \"shownAt\": \"\(now)\"}]}")
                + Self.head("/banner")
                + Self.post(
                    "/carousels/default/views", "{\"views\": [{\"banner\": \"b0\", \"at\": \"\(now)\", \"ms\": 5}]}",
                    "Origin: \(Self.shop)\r\n")
                + Self.post(
                    Self.receiptsPath,
                    "{\"receipts\": [{\"version\": 1, \"banner\": \"nope\", \"shownAt\": \"\(now)\"}]}")
                + Self.last)
        // The media library (docs/MEDIA.md): a file read from the store, then from memory; its
        // validators, ranges, and paths that name nothing; an upload refused from its head.
        let png = Array(
            try Data(
                contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                    .appendingPathComponent("../MediaTests/Fixtures/quadrant.png")))
        let uploaded = try await fast.request("POST", "/media", headers: [("Content-Type", "image/png")], bytes: png)
        #expect(uploaded.status == 201)
        let file = "/media/\(try #require(try uploaded.json["id"] as? String))"
        let media = Exchange(
            "media files",
            Self.head(file) + Self.head(file) + Self.head(file, method: "HEAD")
                + Self.head(file, "If-None-Match: \"\(file.dropFirst(7))\"\r\n")
                + Self.head(file, "Range: bytes=0-9\r\n")
                + Self.head(file, "Range: bytes=-4\r\n") + Self.head(file, "Range: bytes=99999-\r\n")
                + Self.head(file, "Range: bytes=0-1,4-5\r\n") + Self.head(file + "/480.webp")
                + Self.head("/media/not-an-id") + Self.head(file + "/961.webp") + Self.last)
        let oversize = Exchange(
            "an upload over mediaMaxBytes",
            "POST /media HTTP/1.1\r\nHost: localhost\r\nContent-Type: image/png\r\nContent-Length: 20000000\r\n\r\n")
        for exchange in Self.exchanges + [conditional, reports, media, oversize] {
            let fastAnswer = try await Self.answer(to: exchange, port: fast.port)
            let plainAnswer = try await Self.answer(to: exchange, port: plain.port)
            #expect(!plainAnswer.isEmpty, "\(exchange): libmicrohttpd answered")
            #expect(
                Self.maskingDate(fastAnswer) == Self.maskingDate(plainAnswer),
                "\(exchange)\nfast paths:\n\(Self.printable(fastAnswer))\nlibmicrohttpd:\n\(Self.printable(plainAnswer))"
            )
        }
        let taken = String(decoding: try await Self.answer(to: reports, port: fast.port), as: UTF8.self)
        #expect(taken.components(separatedBy: "HTTP/1.1 204 No Content\r\n").count == 3, "\(taken)")
        #expect(taken.contains("HTTP/1.1 422 "), "\(taken)")
        let served = String(decoding: try await Self.answer(to: media, port: plain.port), as: UTF8.self)
        for status in ["200 OK", "304 Not Modified", "206 Partial Content", "416 ", "404 Not Found"] {
            #expect(served.contains("HTTP/1.1 \(status)"), "\(status) among the media answers:\n\(served)")
        }
        let notModified = try await Self.answer(to: conditional, port: fast.port)
        #expect(String(decoding: notModified, as: UTF8.self).hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
    }

    static func answer(to exchange: Exchange, port: Int) async throws -> [UInt8] {
        let connection = try HTTPConnection(port: port)
        for piece in exchange.pieces { try await connection.write(piece) }
        guard exchange.stream else { return try await connection.readRaw() }
        // The head, and the first event (the state now) when the stream was opened.
        return try await connection.readRaw { bytes in
            let text = String(decoding: bytes, as: UTF8.self)
            guard let data = text.range(of: "data: ") else { return false }
            return text[data.upperBound...].contains("\n\n")
        }
    }

    static func maskingDate(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(
            of: "Date: [^\r]*\r\n", with: "Date: *\r\n", options: .regularExpression)
    }

    static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes, as: UTF8.self).replacingOccurrences(of: "\r", with: "\\r")
    }
}
