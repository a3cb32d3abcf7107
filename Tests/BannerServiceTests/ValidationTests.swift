import Definitions
import Testing

@testable import BannerAPI

@Suite("Field validation")
struct ValidationTests {
    @Test(arguments: ["welcome", "spring-sale", "a.b_c-1", String(repeating: "x", count: 64)])
    func acceptsValidIDs(_ id: String) {
        #expect(Validation.isBannerID(id))
    }

    @Test(arguments: ["", "with space", "ümlaut", "slash/", String(repeating: "x", count: 65)])
    func refusesInvalidIDs(_ id: String) {
        #expect(!Validation.isBannerID(id))
    }

    @Test(arguments: [
        "https://cdn.example.com/a.png", "http://localhost:8080/x?y=1#z", "HTTPS://EXAMPLE.COM",
        "https://user@host.example/path", "http://[::1]:8080/",
    ])
    func acceptsAbsoluteHTTPURLs(_ url: String) {
        #expect(Validation.isAbsoluteHTTPURL(url))
    }

    @Test(arguments: [
        "", "cdn.example.com/a.png", "/relative.png", "ftp://example.com/a", "https://", "https:///path",
        "https://exa mple.com", "javascript:alert(1)", "https://example.com/é", "https://<script>/",
        "https://" + String(repeating: "a", count: 2048),
    ])
    func refusesEverythingElse(_ url: String) {
        #expect(!Validation.isAbsoluteHTTPURL(url))
    }
}
