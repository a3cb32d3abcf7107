import Carousel
import Foundation
import JSON
import Logging
import MicroHTTP
import Testing
import TimeZones

@testable import BannerAPI
@testable import BannerService

@Suite("Conditional reads")
struct ConditionalReadTests {
    @Test(arguments: ["/banner", "/banners", "/banner/index"])
    func aMatchingIfNoneMatchGets304UntilTheStateChanges(_ path: String) async throws {
        let harness = RouterHarness()
        let first = await harness.send("GET", path)
        #expect(first.status == 200)
        #expect(first.header("Cache-Control") == "no-cache")
        let etag = try #require(first.header("ETag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""), "a strong entity tag")

        for sent in [etag, "W/\(etag)", "\"other\", \(etag)", "*"] {
            let again = await harness.send("GET", path, headers: [("If-None-Match", sent)])
            #expect(again.status == 304, "If-None-Match: \(sent)")
            #expect(again.header("ETag") == etag)
        }
        #expect(await harness.send("HEAD", path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(await harness.send("GET", path, headers: [("If-None-Match", "\"stale\"")]).status == 200)

        _ = await harness.send("POST", "/banner/next")
        let changed = await harness.send("GET", path, headers: [("If-None-Match", etag)])
        #expect(changed.status == 200)
        #expect(changed.header("ETag") != etag)
        #expect(changed.body == (await harness.send("GET", path)).body)
    }

    @Test func eachResourceHasItsOwnTag() async {
        let harness = RouterHarness()
        let tags = await [
            harness.send("GET", "/banner"), harness.send("GET", "/banners"), harness.send("GET", "/banner/index"),
        ]
        .map { $0.header("ETag") }
        #expect(Set(tags).count == 3)
    }

    @Test func tagsOfAnotherRunNeverMatch() {
        let carousel = Carousel(banners: sampleBanners(2), interval: .seconds(4), now: t0)
        let first = PreparedReads(initial: carousel)
        let restarted = PreparedReads(initial: carousel)
        let tag = first.response(.state, origin: nil, ifNoneMatch: nil).response.headers.first { $0.name == "ETag" }
        let other = restarted.response(.state, origin: nil, ifNoneMatch: nil).response.headers.first {
            $0.name == "ETag"
        }
        #expect(tag != nil && tag != other, "version 1 of two runs must not share a tag")
    }

    /// Another audience's advance (docs/AUDIENCES.md) publishes a new value of the carousel but
    /// not a new state of screens of no audience: their responses and readers' copies stand.
    @Test func anotherAudiencesAdvanceKeepsThisStatesResponses() {
        let lineup = Lineup(
            banners: [
                Banner(id: "a", image: "https://cdn.example.com/a.png"),
                Banner(id: "b", image: "https://cdn.example.com/b.png", audiences: ["de"]),
            ], interval: .seconds(4))
        var carousel = Carousel(lineup: lineup, now: t0)
        let views = PreparedReads(initial: carousel)
        let before = views.publication.load(ordering: .relaxed)
        carousel.advance(to: t0 + .seconds(4))
        #expect(carousel.state(for: "de").version == 2 && carousel.version == 1)
        views.publish(carousel)
        #expect(views.publication.load(ordering: .relaxed) == before, "a's screens saw no change")
        var edited = lineup
        edited.banners[0].caption = "Sale"
        carousel.redefine(edited, autoplay: nil, at: t0 + .seconds(5))
        views.publish(carousel)
        #expect(views.publication.load(ordering: .relaxed) == before + 1)
    }

    /// A command's answer is made apart from the reads' responses (one response, not the reads'
    /// six): the same bytes and tag as the read that follows it, its request's id once, and the
    /// CORS headers of its origin.
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func aCommandAnswersWhatTheNextReadAnswers(_ transport: Transport) async throws {
        let shop = "https://shop.example.com"
        let service = try await transport.start(corsOrigins: [shop])
        for requestID in ["n-1", nil] {
            let answer = try await service.request(
                "POST", "/banner/next", headers: [("Origin", shop)] + (requestID.map { [("X-Request-Id", $0)] } ?? []))
            #expect(answer.status == 200)
            let read = try await service.request("GET", "/banner", headers: [("Origin", shop)])
            #expect(answer.text == read.text)
            #expect(answer.header("ETag") != nil && answer.header("ETag") == read.header("ETag"))
            #expect(answer.header("Access-Control-Allow-Origin") == shop)
            let ids = answer.headers.filter { $0.name.lowercased() == "x-request-id" }.map(\.value)
            #expect(ids.count == 1 && (requestID == nil || ids == [requestID!]), "\(ids)")
        }
    }

    @Test func aCommandStillAnswers200WhateverIfNoneMatchSays() async {
        let harness = RouterHarness()
        let response = await harness.send("POST", "/banner/next", headers: [("If-None-Match", "*")])
        #expect(response.status == 200)
    }
}

@Suite("CORS")
struct CORSTests {
    let shop = "https://shop.example.com"

    @Test func anAllowedOriginGetsTheGrant() async {
        let harness = RouterHarness(corsOrigins: [shop, "http://localhost:3000"])
        // `/time` too: the embeddable component on a shop's page reads the service's clock.
        for path in ["/banner", "/banners", "/banner/index", "/time"] {
            let response = await harness.send("GET", path, headers: [("Origin", shop)])
            #expect(response.header("Access-Control-Allow-Origin") == shop)
            #expect(response.header("Vary") == "Origin")
            #expect(response.header("Access-Control-Expose-Headers") == "ETag, Location, X-Request-Id")
        }
        let command = await harness.send("POST", "/banner/next", headers: [("Origin", shop)])
        #expect(command.status == 200)
        #expect(command.header("Access-Control-Allow-Origin") == shop)
        let refused = await harness.sendJSON("PUT", "/banner/index", "{}", headers: [("Origin", shop)])
        #expect(refused.status == 400)
        #expect(refused.header("Access-Control-Allow-Origin") == shop, "so the page can read the error")
        let notModified = await harness.send(
            "GET", "/banner",
            headers: [("Origin", shop), ("If-None-Match", (await harness.send("GET", "/banner")).header("ETag")!)])
        #expect(notModified.status == 304)
        #expect(notModified.header("Access-Control-Allow-Origin") == shop)
    }

    @Test func anUnlistedOriginGetsNoCORSHeaders() async {
        let harness = RouterHarness(corsOrigins: [shop])
        for origin in ["https://evil.example", "https://shop.example.com.evil.example", "null"] {
            let response = await harness.send("GET", "/banner", headers: [("Origin", origin)])
            #expect(response.status == 200)
            #expect(response.header("Access-Control-Allow-Origin") == nil)
            #expect(response.header("Vary") == "Origin", "the answer still depends on Origin")
        }
        #expect(await harness.send("GET", "/banner").header("Access-Control-Allow-Origin") == nil)
    }

    @Test func aWildcardAllowsEveryOrigin() async {
        let harness = RouterHarness(corsOrigins: ["*"])
        let response = await harness.send("GET", "/banner", headers: [("Origin", "https://anyone.example")])
        #expect(response.header("Access-Control-Allow-Origin") == "*")
    }

    @Test func preflightAnswersMethodsAndHeadersToAllowedOrigins() async {
        let harness = RouterHarness(corsOrigins: [shop])
        let response = await harness.send(
            "OPTIONS", "/banner/index",
            headers: [
                ("Origin", shop), ("Access-Control-Request-Method", "PUT"),
                ("Access-Control-Request-Headers", "authorization, content-type"),
            ])
        #expect(response.status == 204)
        #expect(response.header("Access-Control-Allow-Origin") == shop)
        #expect(response.header("Access-Control-Allow-Methods") == "GET, HEAD, PUT, OPTIONS")
        #expect(
            response.header("Access-Control-Allow-Headers")
                == "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id, X-Screen-Id, X-Screen-Key"
        )
        #expect(response.header("Access-Control-Max-Age") == "600")
        #expect(response.header("Allow") == "GET, HEAD, PUT, OPTIONS")

        let stranger = await harness.send(
            "OPTIONS", "/banner/next",
            headers: [("Origin", "https://evil.example"), ("Access-Control-Request-Method", "POST")])
        #expect(stranger.status == 204)
        #expect(stranger.header("Access-Control-Allow-Origin") == nil)
        #expect(stranger.header("Access-Control-Allow-Methods") == nil)
    }

    /// CORS is for reads, views, clicks and commands; admin routes are for tokens and the admin
    /// page's own origin. A preflight grants a path's other methods only, and an admin answer
    /// carries no grant (a page of another origin cannot read it).
    @Test func preflightNeverGrantsTheAdminAPI() async {
        for origins in [[shop], ["*"]] {
            let harness = RouterHarness(corsOrigins: origins)
            let definition = await harness.send(
                "OPTIONS", "/carousels/default",
                headers: [("Origin", shop), ("Access-Control-Request-Method", "DELETE")])
            #expect(definition.status == 204)
            #expect(definition.header("Allow") == "GET, HEAD, PUT, PATCH, DELETE, OPTIONS")
            #expect(definition.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
            let banner = await harness.send(
                "OPTIONS", "/carousels/default/banners/b1",
                headers: [("Origin", shop), ("Access-Control-Request-Method", "PUT")])
            #expect(banner.header("Access-Control-Allow-Methods") == "GET, HEAD, OPTIONS")
            for path in ["/carousels/default/takeover", "/carousels/default/order"] {
                let adminOnly = await harness.send(
                    "OPTIONS", path, headers: [("Origin", shop), ("Access-Control-Request-Method", "POST")])
                #expect(adminOnly.status == 204)
                #expect(adminOnly.header("Access-Control-Allow-Origin") == nil, "\(path)")
                #expect(adminOnly.header("Access-Control-Allow-Methods") == nil, "\(path)")
            }
            let stats = await harness.send("GET", "/carousels/default/stats", headers: [("Origin", shop)])
            #expect(stats.status == 403, "a page of another origin does not get loopback's trust")
            #expect(stats.header("Access-Control-Allow-Origin") == nil)
            let read = await harness.send("GET", "/carousels/default", headers: [("Origin", shop)])
            #expect(read.header("Access-Control-Allow-Origin") != nil, "reading a definition is a read")
        }
    }

    @Test func preflightNeedsNoToken() async {
        let harness = RouterHarness(token: "secret", corsOrigins: [shop])
        let response = await harness.send(
            "OPTIONS", "/banner/next", headers: [("Origin", shop), ("Access-Control-Request-Method", "POST")])
        #expect(response.status == 204)
    }

    @Test func withCORSOffThereAreNoCORSHeadersAndOptionsIs405() async {
        let harness = RouterHarness()
        let response = await harness.send("GET", "/banner", headers: [("Origin", shop)])
        #expect(response.header("Access-Control-Allow-Origin") == nil)
        #expect(response.header("Vary") == nil)
        #expect(await harness.send("OPTIONS", "/banner").status == 405)
    }

    @Test(arguments: [
        ("*", true), ("https://shop.example.com", true), ("http://localhost:3000", true),
        ("https://shop.example.com/", false), ("https://shop.example.com/path", false), ("shop.example.com", false),
        ("HTTPS://SHOP.EXAMPLE.COM", false), ("ftp://shop.example.com", false), ("", false),
    ])
    func originsInTheConfigurationAreChecked(_ origin: String, _ valid: Bool) {
        #expect(CORSPolicy.isValidOrigin(origin) == valid)
    }
}

@Suite("Web client assets")
struct WebClientAssetTests {
    @Test(arguments: [
        ("/", "text/html; charset=utf-8"), ("/app.js", "text/javascript; charset=utf-8"),
        ("/sync.js", "text/javascript; charset=utf-8"),
        ("/swipe.js", "text/javascript; charset=utf-8"), ("/embed.js", "text/javascript; charset=utf-8"),
        ("/embed-demo.html", "text/html; charset=utf-8"), ("/embed-demo.css", "text/css; charset=utf-8"),
        ("/app.css", "text/css; charset=utf-8"), ("/favicon.svg", "image/svg+xml"),
    ])
    func eachAssetHasItsTypeATagAndTheSecurityHeaders(_ path: String, _ contentType: String) async throws {
        let harness = RouterHarness()
        let response = await harness.send("GET", path)
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == contentType)
        #expect(response.header("X-Content-Type-Options") == "nosniff")
        #expect(response.header("Content-Security-Policy")?.contains("script-src 'self'") == true)
        let etag = try #require(response.header("ETag"))
        #expect(await harness.send("GET", path, headers: [("If-None-Match", etag)]).status == 304)
        #expect(await harness.send("HEAD", path).status == 200)
    }

    /// The service worker fetches what the page plays offline: this service, and banner images
    /// from anywhere; it runs nothing but itself and is never framed.
    @Test func theServiceWorkerHasAPolicyOfItsOwn() async throws {
        let harness = RouterHarness(corsOrigins: ["https://shop.example.com"])
        let response = await harness.send("GET", "/sw.js")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(response.header("Content-Security-Policy") == "default-src 'none'; connect-src 'self' http: https:")
        #expect(response.header("Cache-Control") == "no-cache")
        #expect(response.text.contains(#"self.addEventListener("fetch""#))
        let etag = try #require(response.header("ETag"))
        #expect(await harness.send("GET", "/sw.js", headers: [("If-None-Match", etag)]).status == 304)
    }

    @Test func thePageLoadsItsScriptAndStyleFromTheService() async {
        let page = await RouterHarness().send("GET", "/").text
        #expect(page.contains(#"<script src="/sync.js" defer></script>"#))
        #expect(page.contains(#"<script src="/app.js" defer></script>"#))
        #expect(page.contains(#"<link rel="stylesheet" href="/app.css">"#))
    }

    /// FNV-1a of the content, so another process (a restart) serves the same tags.
    @Test func tagsAreAFingerprintOfTheContentAlone() async {
        #expect(StaticAssets.fingerprint([]) == 0xcbf2_9ce4_8422_2325)
        #expect(StaticAssets.fingerprint(Array("a".utf8)) == 0xaf63_dc4c_8601_ec8c)
        #expect(StaticAssets.fingerprint(Array("foobar".utf8)) == 0x8594_4171_f739_67e8)
        let first = await RouterHarness().send("GET", "/app.js").header("ETag")
        let second = await RouterHarness(banners: 2, corsOrigins: ["*"]).send("GET", "/app.js").header("ETag")
        #expect(first != nil)
        #expect(first == second)
    }

    @Test func framingFollowsTheCORSOrigins() {
        #expect(StaticAssets.contentSecurityPolicy(framedBy: .off).hasSuffix("frame-ancestors 'self'"))
        #expect(
            StaticAssets.contentSecurityPolicy(framedBy: CORSPolicy(origins: ["https://shop.example.com"]))
                .hasSuffix("frame-ancestors 'self' https://shop.example.com"))
        #expect(StaticAssets.contentSecurityPolicy(framedBy: CORSPolicy(origins: ["*"])).hasSuffix("frame-ancestors *"))
    }

    /// Who sent a request is judged from its Origin and Sec-Fetch-Site: two of either are refused
    /// by both engines, the fast paths' reads included (the first used to decide, whatever the
    /// second said).
    @Test(arguments: [Transport.live, .libmicrohttpd])
    func twoOriginsOrTwoFetchSitesAreRefused(_ transport: Transport) async throws {
        let service = try await transport.start(corsOrigins: ["https://shop.example.com"])
        let one = try await service.request("GET", "/banner", headers: [("Origin", "https://shop.example.com")])
        #expect(one.status == 200)
        #expect(one.header("Access-Control-Allow-Origin") == "https://shop.example.com")
        let cases = [
            (
                "Origin", ["https://shop.example.com", "https://evil.example"],
                "several Origin headers; send at most one"
            ),
            ("Sec-Fetch-Site", ["same-origin", "cross-site"], "several Sec-Fetch-Site headers; send at most one"),
        ]
        for (name, values, reason) in cases {
            for path in ["/banner", "/carousels"] {
                let two = try await service.request("GET", path, headers: values.map { (name, $0) })
                #expect(two.status == 400, "\(name) twice on \(path)")
                #expect(two.text.contains(reason), "\(two.text)")
            }
        }
    }

    /// Another site may frame the page at `/` when CORS allows it, never the admin page or its
    /// files: framed, the admin page's requests would be same-origin under the other site's clicks.
    @Test(arguments: Transport.allCases)
    func theAdminPageIsFramedByThisServiceAloneWhateverCORSAllows(_ transport: Transport) async throws {
        let pageAncestors = [
            (["*"], "*"), (["https://shop.example.com"], "'self' https://shop.example.com"), ([], "'self'"),
        ]
        for (origins, ancestors) in pageAncestors {
            let service = try await transport.start(corsOrigins: origins)
            let page = try await service.request("GET", "/")
            #expect(page.header("Content-Security-Policy")?.hasSuffix("; frame-ancestors \(ancestors)") == true)
            for path in ["/admin", "/admin.js", "/admin-api.js", "/admin.css"] {
                let answer = try await service.request("GET", path)
                #expect(answer.status == 200, "\(path)")
                #expect(
                    answer.header("Content-Security-Policy")?.hasSuffix("; frame-ancestors 'self'") == true,
                    "\(path) with CORS origins \(origins)")
            }
        }
    }
}
