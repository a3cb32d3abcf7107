import BannerService
import Foundation
import TestSupport
import Testing

@testable import BannerAPI

/// Webhooks over HTTP (docs/WEBHOOKS.md): created with the events they are told of and their
/// secret (never shown again, never in the audit log), listed, read, deleted; a URL that is not
/// http(s) or leads to a non-public address, an unknown event or a weak secret is a 422 naming
/// the field, and nothing is kept.
@Suite("Webhooks API")
struct WebhookAPITests {
    static let secret = "0123456789abcdef-secret"

    static func create(_ service: any TestService, url: String, events: [String] = ["carousel.changed"])
        async throws -> HTTPResponse
    {
        let body = try JSONSerialization.data(withJSONObject: ["url": url, "events": events, "secret": secret])
        return try await AdminAPITests.json(service, "POST", "/webhooks", String(decoding: body, as: UTF8.self))
    }

    static func listed(_ service: any TestService) async throws -> [[String: Any]] {
        try #require(try await service.request("GET", "/webhooks").json["webhooks"] as? [[String: Any]])
    }

    @Test(arguments: Transport.eachStore)
    func aWebhookIsCreatedListedReadAndDeleted(_ transport: Transport) async throws {
        let service = try await transport.start()
        let created = try await Self.create(
            service, url: "https://93.184.216.34/hooks/carousel", events: ["takeover.ended", "carousel.changed"])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(try created.json["id"] as? Int)
        #expect(created.header("Location") == "/webhooks/\(id)")
        #expect(try created.json["events"] as? [String] == ["carousel.changed", "takeover.ended"])
        #expect(try created.json["url"] as? String == "https://93.184.216.34/hooks/carousel")
        #expect(!created.text.contains(Self.secret), "the secret is not shown again")
        #expect(try await Self.listed(service).map { $0["id"] as? Int } == [id])
        let read = try await service.request("GET", "/webhooks/\(id)")
        #expect(read.status == 200 && !read.text.contains(Self.secret))
        #expect(try read.json["createdBy"] as? String == "loopback")

        #expect(try await service.request("DELETE", "/webhooks/\(id)").status == 204)
        let again = try await service.request("DELETE", "/webhooks/\(id)")
        #expect(again.status == 404)
        #expect(again.problemDetail == "no webhook \(id); GET /webhooks lists them")
        #expect(try await service.request("GET", "/webhooks/\(id)").status == 404)
        #expect(try await service.request("GET", "/webhooks/first").status == 404)
        #expect(try await Self.listed(service).isEmpty)
        let entries = try #require(
            try await service.request("GET", "/audit?limit=2").json["entries"] as? [[String: Any]])
        #expect(
            entries.map { "\($0["action"]!) \($0["target"]!)" } == [
                "webhook.delete \(id) https://93.184.216.34/hooks/carousel",
                "webhook.create \(id) https://93.184.216.34/hooks/carousel",
            ])
    }

    @Test(arguments: Transport.eachStore)
    func aBadWebhookIsRefusedNamingTheFieldAndNothingIsKept(_ transport: Transport) async throws {
        let service = try await transport.start()
        let allowed = "unless webhookAllowPrivate (CAROUSEL_WEBHOOK_ALLOW_PRIVATE) is true"
        let cases: [(String, [String], String, String)] = [
            (
                "ftp://93.184.216.34/", ["carousel.changed"], Self.secret,
                "url: 'ftp://93.184.216.34/' is not an http:// or https:// URL"
            ),
            (
                "http://127.0.0.1:9/hook", ["carousel.changed"], Self.secret,
                "url: 'http://127.0.0.1:9/hook' leads to a non-public address: 127.0.0.1 is loopback (127.0.0.0/8); "
                    + "webhooks reach public addresses only \(allowed)"
            ),
            (
                "http://169.254.169.254/latest/meta-data", ["carousel.changed"], Self.secret,
                "url: 'http://169.254.169.254"
            ),
            ("http://localhost:8080/", ["carousel.changed"], Self.secret, "url: 'http://localhost:8080/' leads to"),
            (
                "http://[::ffff:10.0.0.1]/", ["carousel.changed"], Self.secret,
                "url: 'http://[::ffff:10.0.0.1]/' leads to"
            ),
            (
                "https://93.184.216.34/", ["carousel.changed", "carousel.exploded"], Self.secret,
                "events[1]: 'carousel.exploded' is no event; use carousel.changed, carousel.published"
            ),
            ("https://93.184.216.34/", [], Self.secret, "events: name at least one event"),
            ("https://93.184.216.34/", ["carousel.changed"], "short", "secret: use 16 to 256 printable ASCII"),
        ]
        for (url, events, secret, detail) in cases {
            let body = try JSONSerialization.data(withJSONObject: ["url": url, "events": events, "secret": secret])
            let answer = try await AdminAPITests.json(
                service, "POST", "/webhooks", String(decoding: body, as: UTF8.self))
            #expect(answer.status == 422, "\(url) \(events)")
            #expect(answer.problemDetail?.hasPrefix(detail) == true, "\(answer.problemDetail ?? "")")
            #expect(answer.problemDetail?.contains(secret) != true || secret == "short")
        }
        let missing = try await AdminAPITests.json(service, "POST", "/webhooks", #"{"url": "https://93.184.216.34/"}"#)
        #expect(missing.status == 422 && missing.problemDetail?.hasPrefix("events") == true, "\(missing.text)")
        #expect(try await Self.listed(service).isEmpty)
    }

    /// `webhookAllowPrivate`: a receiver on this machine or a private network may be named.
    @Test func privateAddressesAreAllowedWhenTheServiceSaysSo() async throws {
        let service = try await LiveService(webhookAllowPrivate: true)
        for url in ["http://127.0.0.1:9000/hook", "http://localhost:9000/hook", "http://10.0.0.5/hook"] {
            let created = try await Self.create(service, url: url)
            #expect(created.status == 201, "\(url): \(created.text)")
        }
        let refused = try await Self.create(service, url: "ftp://10.0.0.5/")
        #expect(refused.status == 422, "http(s) still")
        #expect(try await Self.listed(service).count == 3)
    }
}
