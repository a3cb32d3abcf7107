import Carousel
import Definitions
import Digest
import Foundation
import Store
import TestSupport
import Testing

@testable import BannerService

/// The media library over HTTP (docs/MEDIA.md, docs/API.md): the same checks through the router,
/// the live service (fast paths on and off) and PostgreSQL.
@Suite("Media library API")
struct MediaAPITests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../MediaTests/Fixtures").standardized

    static func fixture(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    static func sha256(_ bytes: [UInt8]) -> String { bytes.withUnsafeBytes { SHA256.hex(of: $0) } }

    func upload(_ service: any TestService, _ bytes: [UInt8], type: String = "image/jpeg") async throws -> HTTPResponse
    {
        try await service.request("POST", "/media", headers: [("Content-Type", type)], bytes: bytes)
    }

    @Test(arguments: Transport.allCases)
    func anUploadIsStoredWithItsVariantsAndServedImmutable(_ transport: Transport) async throws {
        let service = try await transport.start()
        let jpeg = try Self.fixture("wide.jpg")
        let id = Self.sha256(jpeg)

        let created = try await upload(service, jpeg)
        #expect(created.status == 201, "\(created.text)")
        #expect(created.header("Location") == "/media/\(id)")
        let record = try created.json
        #expect(record["id"] as? String == id)
        #expect(record["type"] as? String == "image/jpeg")
        #expect(record["width"] as? Int == 1000 && record["height"] as? Int == 750)
        #expect(record["url"] as? String == "/media/\(id)")
        let variants = try #require(record["variants"] as? [[String: Any]])
        #expect(variants.compactMap { $0["width"] as? Int } == [480, 960])
        #expect(variants.compactMap { $0["url"] as? String } == ["/media/\(id)/480.webp", "/media/\(id)/960.webp"])
        #expect((record["usedBy"] as? [Any])?.isEmpty == true)

        let again = try await upload(service, jpeg)
        #expect(again.status == 200)
        #expect(try again.json["id"] as? String == id)
        #expect((try await service.request("GET", "/media").json["media"] as? [Any])?.count == 1)

        let original = try await service.request("GET", "/media/\(id)")
        #expect(original.status == 200)
        #expect(original.body == jpeg, "a file without metadata is served as uploaded")
        #expect(original.header("Content-Type") == "image/jpeg")
        #expect(original.header("Cache-Control") == "public, max-age=31536000, immutable")
        #expect(original.header("ETag") == "\"\(id)\"")
        #expect(original.header("Accept-Ranges") == "bytes")
        #expect(original.header("X-Content-Type-Options") == "nosniff")

        let variant = try await service.request("GET", "/media/\(id)/960.webp")
        #expect(variant.status == 200)
        #expect(variant.header("Content-Type") == "image/webp")
        #expect(variant.header("ETag") == "\"\(id)-960\"")
        #expect(
            Array(variant.body.prefix(4)) == Array("RIFF".utf8) && Array(variant.body[8..<12]) == Array("WEBP".utf8))
        #expect(variants.last?["bytes"] as? Int == variant.body.count)

        let head = try await service.request("HEAD", "/media/\(id)/960.webp")
        #expect(head.status == 200 && head.body.isEmpty)
        let cached = try await service.request("GET", "/media/\(id)", headers: [("If-None-Match", "\"\(id)\"")])
        #expect(cached.status == 304)
        if transport != .router {  // libmicrohttpd's part: the length of a HEAD's body, no body on a 304
            #expect(head.header("Content-Length") == "\(variant.body.count)")
            #expect(cached.body.isEmpty)
        }

        for missing in [
            "/media/\(id)/1600.webp", "/media/\(id)/961.webp", "/media/\(String(repeating: "0", count: 64))",
            "/media/not-an-id", "/media/\(id)/960.png", "/media/\(id)/", "/media/\(id)/960.webp/",
            "/media/\(id)/960.webpx", "/media/\(id.uppercased())", "/media/\(id.dropLast())", "/media/\(id)0",
            "/media/", "/media//960.webp",
        ] {
            #expect(try await service.request("GET", missing).status == 404, "\(missing)")
        }
    }

    @Test(arguments: Transport.allCases)
    func byteRangesOfAFile(_ transport: Transport) async throws {
        let service = try await transport.start()
        let jpeg = try Self.fixture("wide.jpg")
        let id = Self.sha256(jpeg)
        #expect(try await upload(service, jpeg).status == 201)
        let path = "/media/\(id)"

        let first = try await service.request("GET", path, headers: [("Range", "bytes=0-99")])
        #expect(first.status == 206)
        #expect(first.body == Array(jpeg[0..<100]))
        #expect(first.header("Content-Range") == "bytes 0-99/\(jpeg.count)")
        if transport != .router { #expect(first.header("Content-Length") == "100") }

        let tail = try await service.request("GET", path, headers: [("Range", "bytes=-10")])
        #expect(tail.status == 206 && tail.body == Array(jpeg.suffix(10)))
        #expect(tail.header("Content-Range") == "bytes \(jpeg.count - 10)-\(jpeg.count - 1)/\(jpeg.count)")

        let rest = try await service.request("GET", path, headers: [("Range", "bytes=\(jpeg.count - 5)-")])
        #expect(rest.status == 206 && rest.body == Array(jpeg.suffix(5)))

        let past = try await service.request("GET", path, headers: [("Range", "bytes=\(jpeg.count)-")])
        #expect(past.status == 416)
        #expect(past.header("Content-Range") == "bytes */\(jpeg.count)")

        // Several ranges, or a range of a file that is no longer the one named: the whole file.
        #expect(try await service.request("GET", path, headers: [("Range", "bytes=0-1,5-6")]).body == jpeg)
        let stale = try await service.request(
            "GET", path, headers: [("Range", "bytes=0-9"), ("If-Range", "\"another\"")])
        #expect(stale.status == 200 && stale.body == jpeg)
    }

    @Test(arguments: Transport.allCases)
    func refusedUploadsChangeNothing(_ transport: Transport) async throws {
        let service = try await transport.start()
        let svg = Array("<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>".utf8)
        var bomb = try Self.fixture("quadrant.png")
        bomb.replaceSubrange(16..<24, with: [0, 0, 0x4E, 0x20, 0, 0, 0x4E, 0x20])
        let jpeg = try Self.fixture("wide.jpg")
        let cases: [(bytes: [UInt8], type: String, status: Int, words: String)] = [
            (svg, "image/svg+xml", 415, "SVG"),
            (try Self.fixture("quadrant.png"), "image/jpeg", 415, "Content-Type says image/jpeg"),
            (jpeg, "text/plain", 415, "multipart/form-data"),
            (bomb, "image/png", 422, "20000 × 20000"),
            (Array(jpeg.prefix(jpeg.count / 2)), "image/jpeg", 422, "cannot be decoded"),
            ([], "image/png", 415, "empty"),
        ]
        for refused in cases {
            let response = try await upload(service, refused.bytes, type: refused.type)
            #expect(response.status == refused.status, "\(refused.words): \(response.text)")
            #expect(response.header("Content-Type") == "application/problem+json")
            #expect(response.problemDetail?.contains(refused.words) == true, "\(response.text)")
        }
        #expect((try await service.request("GET", "/media").json["media"] as? [Any])?.isEmpty == true)
    }

    @Test(arguments: Transport.allCases)
    func anImageShownByABannerCannotBeDeleted(_ transport: Transport) async throws {
        let service = try await transport.start()
        let jpeg = try Self.fixture("wide.jpg")
        let id = Self.sha256(jpeg)
        #expect(try await upload(service, jpeg).status == 201)
        let banner = #"{"id": "hero", "image": "/media/\#(id)", "caption": "Sale"}"#
        let added = try await service.request(
            "POST", "/carousels/default/banners?position=0", headers: [("Content-Type", "application/json")],
            body: banner)
        #expect(added.status == 201, "\(added.text)")

        let listed = try #require((try await service.request("GET", "/media").json["media"] as? [[String: Any]])?.first)
        let users = try #require(listed["usedBy"] as? [[String: String]])
        #expect(users == [["carousel": "default", "banner": "hero"]])

        // Pages get the variants to choose from.
        let listedBanners = try #require(
            try await service.request("GET", "/banners").json["banners"] as? [[String: Any]])
        let hero = try #require(listedBanners.first { $0["id"] as? String == "hero" })
        #expect(listedBanners.filter { $0["srcset"] != nil }.count == 1, "only a library image has variants")
        #expect(
            hero["srcset"] as? String
                == "/media/\(id)/480.webp 480w, /media/\(id)/960.webp 960w, /media/\(id) 1000w")

        let refused = try await service.request("DELETE", "/media/\(id)")
        #expect(refused.status == 409)
        #expect(refused.problemDetail?.contains("banner 'hero' of carousel 'default'") == true, "\(refused.text)")
        #expect(try await service.request("GET", "/media/\(id)").status == 200)

        #expect(try await service.request("DELETE", "/carousels/default/banners/hero").status == 204)
        #expect(try await service.request("DELETE", "/media/\(id)").status == 204)
        #expect(try await service.request("DELETE", "/media/\(id)").status == 404)
        #expect(try await service.request("GET", "/media/\(id)").status == 404)
        #expect(try await service.request("GET", "/media/\(id)/480.webp").status == 404)

        // The revision that showed it cannot come back without it (docs/HISTORY.md).
        let history = try await service.request("GET", "/carousels/default/revisions").json["revisions"]
        let showing = try #require(
            (history as? [[String: Any]])?.first { $0["summary"] as? String == "banner 'hero' added" })
        let number = try #require(showing["revision"] as? Int)
        let before = try await service.request("GET", "/carousels/default")
        let restore = try await service.request("POST", "/carousels/default/revisions/\(number)/restore")
        #expect(restore.status == 422)
        #expect(
            restore.problemDetail?.hasPrefix("banners[0].image: the media library has no image \(id)") == true,
            "\(restore.text)")
        let after = try await service.request("GET", "/carousels/default")
        #expect(after.header("ETag") == before.header("ETag"), "nothing changed")
    }

    /// A banner may name only an image the library has: a write bringing in another is a 422
    /// naming the banner's field, and changes nothing.
    @Test(arguments: Transport.allCases)
    func aBannerNamesOnlyImagesTheLibraryHas(_ transport: Transport) async throws {
        let service = try await transport.start()
        let json = [("Content-Type", "application/json")]
        let missing = String(repeating: "0", count: 64)
        let before = try await service.request("GET", "/carousels/default")
        let writes: [(method: String, path: String, body: String, field: String)] = [
            (
                "POST", "/carousels/default/banners", #"{"id": "hero", "image": "/media/\#(missing)"}"#,
                "banners[5].image"
            ),
            (
                "PATCH", "/carousels/default/banners/b1", #"{"image": "/media/\#(missing)/960.webp"}"#,
                "banners[1].image"
            ),
            (
                "PATCH", "/carousels/default",
                #"{"banners": [{"id": "x", "image": "https://cdn.example.com/media/\#(missing)"}]}"#,
                "banners[0].image"
            ),
            (
                "POST", "/carousels", #"{"name": "lobby", "banners": [{"id": "x", "image": "/media/\#(missing)"}]}"#,
                "banners[0].image"
            ),
        ]
        for write in writes {
            let refused = try await service.request(write.method, write.path, headers: json, body: write.body)
            #expect(refused.status == 422, "\(write.method) \(write.path): \(refused.text)")
            #expect(
                refused.problemDetail?.hasPrefix("\(write.field): the media library has no image \(missing)") == true,
                "\(refused.text)")
        }
        let after = try await service.request("GET", "/carousels/default")
        #expect(after.header("ETag") == before.header("ETag") && after.body == before.body, "nothing changed")
        #expect(try await service.request("GET", "/carousels/lobby").status == 404)

        let jpeg = try Self.fixture("wide.jpg")
        #expect(try await upload(service, jpeg).status == 201)
        let banner = #"{"id": "hero", "image": "/media/\#(Self.sha256(jpeg))/480.webp"}"#
        let added = try await service.request("POST", "/carousels/default/banners", headers: json, body: banner)
        #expect(added.status == 201, "\(added.text)")
    }

    /// An image named before it was checked (a configuration file seeds what it says) does not
    /// block the carousel's other edits.
    @Test func anImageNamedBeforeDoesNotBlockOtherEdits() async throws {
        let store = MemoryStore()
        let lobby = CarouselDefinition(
            name: "lobby", interval: .seconds(10), autoplay: false,
            banners: [
                Banner(id: "gone", image: "/media/\(String(repeating: "0", count: 64))"),
                Banner(id: "kept", image: "https://cdn.example.com/a.png"),
            ])
        try StoreSeeding.importDefinitions([lobby], into: store, now: t0)
        let harness = RouterHarness(store: store)
        let json = [("Content-Type", "application/json")]
        let edited = await harness.send(
            "PATCH", "/carousels/lobby/banners/gone", headers: json, body: #"{"caption": "Still here"}"#)
        #expect(edited.status == 200, "\(String(decoding: edited.body, as: UTF8.self))")
        let moved = await harness.send(
            "PUT", "/carousels/lobby/order", headers: json, body: #"{"ids": ["kept", "gone"]}"#)
        #expect(moved.status == 200, "\(String(decoding: moved.body, as: UTF8.self))")
    }

    @Test(arguments: Transport.allCases)
    func aFormWithOneFileIsAnUpload(_ transport: Transport) async throws {
        let service = try await transport.start()
        let png = try Self.fixture("quadrant.png")
        let boundary = "----carousel\(UInt32.random(in: 0 ... .max))"
        let form =
            Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--\(boundary)\r\n".utf8)
            + Array(
                "Content-Disposition: form-data; name=\"file\"; filename=\"quadrant.png\"\r\nContent-Type: image/png\r\n\r\n"
                    .utf8) + png + Array("\r\n--\(boundary)--\r\n".utf8)
        let created = try await service.request(
            "POST", "/media", headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], bytes: form)
        #expect(created.status == 201, "\(created.text)")
        #expect(try created.json["id"] as? String == Self.sha256(png))
        #expect(try created.json["type"] as? String == "image/png")

        let noFile =
            Array(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--\(boundary)--\r\n"
                    .utf8)
        let refused = try await service.request(
            "POST", "/media", headers: [("Content-Type", "multipart/form-data; boundary=\(boundary)")], bytes: noFile)
        #expect(refused.status == 400)
        #expect(refused.problemDetail?.contains("no file") == true)
    }

    /// A file of 7 MB, more than a socket takes at once: written in pieces, by libmicrohttpd
    /// or by a read loop (fast paths on: from the response itself, without a copy), whole either way,
    /// on fresh connections and one after another on a kept-alive one.
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func aLargeFileIsServedWholeWhateverTheSocketTakes(_ transport: Transport) async throws {
        let service = try await transport.start()
        let folder = try temporaryDirectory()
        // Seconds of work for libvips' tools: waited for on a thread of its own, not one of the few
        // every other test runs on (OffThePool.swift says why).
        let made = try await offThePool {
            try shellOutput(
                "cd \(folder.path) && vips gaussnoise noise.v 3300 2400 --sigma 60 --mean 128 && "
                    + "vips cast noise.v photo.v uchar && vips jpegsave photo.v photo.jpg --Q 95 --strip")
        }
        #expect(made.status == 0)
        let jpeg = Array(try Data(contentsOf: folder.appendingPathComponent("photo.jpg")))
        // More than a socket's send buffer may ever hold (net.ipv4.tcp_wmem's 4 MB at most): the
        // kernel takes the answer in pieces whoever reads it.
        #expect(jpeg.count > 4_194_304 && jpeg.count < 10_485_760)
        let created = try await upload(service, jpeg)
        #expect(created.status == 201, "\(created.text)")
        let path = "/media/\(Self.sha256(jpeg))"
        for _ in 0..<2 {
            let fresh = try await service.request("GET", path)
            #expect(fresh.status == 200 && fresh.body == jpeg)
        }
        guard let live = service as? LiveService else { throw InspectFailure("not a live service") }
        // A reader that takes 4 KB at a time: every answer leaves the server's socket in pieces.
        let connection = try HTTPConnection(port: live.port, receiveBuffer: 4096)
        for _ in 0..<3 {
            let again = try await connection.send("GET", path)
            #expect(again.status == 200 && again.body == jpeg)
        }
        let range = try await connection.send("GET", path, headers: [("Range", "bytes=500000-")])
        #expect(range.status == 206 && range.body == Array(jpeg[500_000...]))
    }

    /// Uploading, listing and deleting are the admin's; the files are anyone's.
    @Test func theLibraryIsTheAdminsItsFilesArePublic() async throws {
        let harness = RouterHarness(adminToken: "secret-admin")
        let jpeg = try Self.fixture("wide.jpg")
        let id = Self.sha256(jpeg)
        let anonymous = await harness.send("POST", "/media", headers: [("Content-Type", "image/jpeg")], bytes: jpeg)
        #expect(anonymous.status == 401)
        let admin = [("Authorization", "Bearer secret-admin")]
        let created = await harness.send(
            "POST", "/media", headers: admin + [("Content-Type", "image/jpeg")], bytes: jpeg)
        #expect(created.status == 201)
        #expect(await harness.send("GET", "/media").status == 401)
        #expect(await harness.send("DELETE", "/media/\(id)").status == 401)
        #expect(await harness.send("GET", "/media/\(id)", fromLoopback: false).status == 200)
        #expect(await harness.send("GET", "/media/\(id)/480.webp", fromLoopback: false).status == 200)
        #expect(await harness.send("GET", "/media", headers: admin).status == 200)
    }

    /// A body declared larger than `mediaMaxBytes` is refused from its head: the client never
    /// sends it (what `Expect: 100-continue` is for), and nothing is stored.
    @Test(arguments: [true, false])
    func anUploadOverTheLimitIsRefusedBeforeItsBodyIsSent(_ fastPaths: Bool) async throws {
        let service = try await LiveService(fastPaths: fastPaths)
        let connection = try HTTPConnection(port: service.port)
        try await connection.write(
            Array(
                ("POST /media HTTP/1.1\r\nHost: localhost\r\nContent-Type: image/jpeg\r\n"
                    + "Content-Length: \(20 << 20)\r\nExpect: 100-continue\r\n\r\n").utf8))
        let response = try await connection.readResponse()
        #expect(response.status == 413)
        #expect(response.problemDetail?.contains("10485760 bytes (mediaMaxBytes)") == true, "\(response.text)")
        #expect((try await service.request("GET", "/media").json["media"] as? [Any])?.isEmpty == true)
    }

    /// A chunked upload (no length declared) is answered 413 as soon as it is past
    /// `mediaMaxBytes`, while the client still sends it, and its connection is closed once the
    /// client stops (found from outside: it was closed with no answer at all).
    @Test(arguments: [true, false])
    func aChunkedUploadPastTheLimitIsAnswered413WhileItIsSent(_ fastPaths: Bool) async throws {
        let service = try await LiveService(fastPaths: fastPaths)
        let connection = try HTTPConnection(port: service.port)
        try await connection.write(
            Array(
                "POST /media HTTP/1.1\r\nHost: localhost\r\nContent-Type: image/jpeg\r\nTransfer-Encoding: chunked\r\n\r\n"
                    .utf8))
        // 11 MiB in chunks of 1 MiB, and no last chunk: the answer comes before the body ends.
        let chunk = Array("100000\r\n".utf8) + [UInt8](repeating: 0xFF, count: 1 << 20) + Array("\r\n".utf8)
        for _ in 0..<11 { try await connection.write(chunk) }
        let response = try await connection.readResponse()
        #expect(response.status == 413 && response.header("Connection") == "close")
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.problemDetail?.contains("10485760 bytes (mediaMaxBytes)") == true, "\(response.text)")
        connection.hangUp()
        #expect((try await service.request("GET", "/media").json["media"] as? [Any])?.isEmpty == true)
    }
}

struct InspectFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
