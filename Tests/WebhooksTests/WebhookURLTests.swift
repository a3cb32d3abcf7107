import Testing

@testable import Webhooks

/// Webhook URLs (docs/WEBHOOKS.md): read into what is connected to, or refused with a reason; and
/// the addresses they lead to, public or not.
@Suite("Webhook URLs and addresses")
struct WebhookURLTests {
    @Test func aURLIsReadIntoSchemeHostPortAndTarget() throws {
        let plain = try WebhookURL("http://Hooks.Example.com/carousel?team=web")
        #expect(!plain.secure && plain.host == "hooks.example.com" && plain.port == 80)
        #expect(plain.target == "/carousel?team=web")
        let secure = try WebhookURL("HTTPS://hooks.example.com:8443")
        #expect(secure.secure && secure.port == 8443 && secure.target == "/")
        let v6 = try WebhookURL("https://[2001:DB8::1]:9000?x=1")
        #expect(v6.host == "2001:db8::1" && v6.hostIsIPv6 && v6.port == 9000 && v6.target == "/?x=1")
        #expect(try WebhookURL("http://192.0.2.7/").host == "192.0.2.7")
        // Found against libcurl: an IPv6 address is listed as libcurl reads it, in its shortest form.
        #expect(try WebhookURL("http://[6::0]?").host == "6::")
        #expect(try WebhookURL("http://[2001:DB8:0:0::1]/").host == "2001:db8::1")
    }

    @Test(arguments: [
        ("ftp://example.com/", "is not an http:// or https:// URL"),
        ("https://user:pw@example.com/", "names a user or password"),
        ("https://example.com/#top", "has a fragment (#…), which is never sent; leave it out"),
        ("https://exa mple.com/", "has a space, a control character or a non-ASCII one; percent-encode them"),
        ("https://ex_ample.com/", "has no host name"),
        ("https:///path", "has no host name"),
        ("https://example.com:0/", "has a port that is not a number from 1 to 65535"),
        ("https://example.com:65536/", "has a port that is not a number from 1 to 65535"),
        ("https://example.com:/", "has a port that is not a number from 1 to 65535"),
        ("https://[::1/", "has an IPv6 address without its closing ]"),
        ("https://[example.com]/", "has 'example.com' in brackets, which is not an IPv6 address"),
        ("https://[::1]x/", "has characters after the IPv6 address's ]"),
        // Found against libcurl, which connects to these as the address they spell.
        ("http://0x7f.1/", "writes the IPv4 address 127.0.0.1 as '0x7f.1'; write it as 127.0.0.1"),
        ("http://2130706433/", "writes the IPv4 address 127.0.0.1 as '2130706433'"),
        ("http://0177.0.0.1/", "writes the IPv4 address 127.0.0.1 as '0177.0.0.1'"),
        ("http://127.1:8080/", "writes the IPv4 address 127.0.0.1 as '127.1'"),
        ("http://010.8.8.8/", "writes the IPv4 address 8.8.8.8 as '010.8.8.8'"),
    ])
    func aURLThatIsNotAWebhooksIsRefusedSayingWhy(_ text: String, _ reason: String) {
        #expect(throws: WebhookURLError.self) { try WebhookURL(text) }
        do {
            _ = try WebhookURL(text)
        } catch {
            #expect(error.message.hasPrefix(reason), "\(text): \(error.message)")
        }
    }

    @Test func aURLLongerThan2048BytesIsRefused() {
        #expect(throws: WebhookURLError("is longer than 2048 bytes")) {
            try WebhookURL("https://example.com/" + String(repeating: "a", count: 2030))
        }
    }

    @Test(arguments: [
        "127.0.0.1", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "255.255.255.255", "198.18.0.1", "::1", "::", "fc00::1", "fd12:3456::1", "fe80::1",
        "ff02::1", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::", "2001:db8::1",
        // Found from outside: local-use NAT64 holding 127.0.0.1, IPv4-translated, Teredo, discard,
        // the documentation ranges docs/WEBHOOKS.md says are refused.
        "64:ff9b:1::7f00:1", "::ffff:0:127.0.0.1", "::ffff:0:8.8.8.8", "2001::1", "2001:0:4136:e378::1", "100::1",
        "3fff::1", "192.0.2.1", "198.51.100.7", "203.0.113.255", "192.88.99.1",
    ])
    func privateLoopbackLinkLocalAndReservedAddressesAreNotPublic(_ text: String) throws {
        let address = try #require(IPAddress(parsing: text))
        #expect(address.notPublic != nil, "\(text)")
    }

    @Test(arguments: [
        "93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "2606:4700::1111", "::ffff:8.8.8.8", "2001:200::1",
        "2001:4860:4860::8888", "64:ff9b::808:808", "192.0.3.1", "198.51.101.1", "203.0.114.1", "101::1",
    ])
    func publicAddressesArePublic(_ text: String) throws {
        #expect(try #require(IPAddress(parsing: text)).notPublic == nil, "\(text)")
    }

    @Test func aNameOrLiteralLeadingToThisMachineIsRefusedUnlessPrivateAddressesAreAllowed() throws {
        for text in ["http://127.0.0.1:8080/hook", "http://localhost:8080/hook", "http://[::ffff:127.0.0.1]/"] {
            let url = try WebhookURL(text)
            #expect(throws: WebhookURLError.self, "\(text)") {
                try WebhookAddresses.resolve(url, allowPrivate: false)
            }
            #expect(try !WebhookAddresses.resolve(url, allowPrivate: true).isEmpty, "\(text) when allowed")
        }
        do {
            _ = try WebhookAddresses.resolve(try WebhookURL("http://localhost/"), allowPrivate: false)
        } catch {
            #expect(error.message.contains("localhost resolves to "))
            #expect(error.message.hasSuffix("unless webhookAllowPrivate (CAROUSEL_WEBHOOK_ALLOW_PRIVATE) is true"))
        }
        #expect(
            try WebhookAddresses.resolve(WebhookURL("https://93.184.216.34/hook"), allowPrivate: false).map(
                \.description)
                == ["93.184.216.34"], "a public literal needs no lookup")
    }
}
