import CCurl
import Testing
import Webhooks

/// Webhook URLs held to libcurl's own reading of them (`curl_url`, the parser behind CURLOPT_URL,
/// which a delivery is handed the URL through): every URL `WebhookURL` takes, libcurl takes too,
/// with the same scheme, host, port and target, so that what is checked, listed and signed for is
/// what is connected to. `WebhookURL` is the stricter (no user, no fragment, printable ASCII only):
/// a URL it refuses libcurl may take.
@Suite("Webhook URLs against libcurl")
struct CurlURLOracleTests {
    /// How libcurl reads `text`: nil when it refuses it.
    static func curl(_ text: String) throws -> (scheme: String, host: String, port: Int, target: String)? {
        if let failure = ccurl_start() { throw CurlUnavailable(reason: String(cString: failure)) }
        var (scheme, host, port, path, query):
            (
                UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?,
                UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?
            ) = (nil, nil, nil, nil, nil)
        guard ccurl_url_parts(text, &scheme, &host, &port, &path, &query) == 0 else { return nil }
        defer { for part in [scheme, host, port, path, query] { part.map(ccurl_free) } }
        let read = { (part: UnsafeMutablePointer<CChar>?) in part.map { String(cString: $0) } ?? "" }
        let target = read(path) + (query.map { "?" + String(cString: $0) } ?? "")
        return (read(scheme), read(host), Int(read(port)) ?? -1, target)
    }

    struct CurlUnavailable: Error { let reason: String }

    /// `text` read by both; a disagreement is named.
    static func agree(_ text: String) throws {
        guard let url = try? WebhookURL(text) else { return }
        let read = try #require(try curl(text), "libcurl refuses \(text), which WebhookURL takes")
        #expect(read.scheme == (url.secure ? "https" : "http"), "\(text): scheme \(read.scheme)")
        if url.hostIsIPv6 {
            // The same address; libcurl writes it shorter only when that is shorter than as given.
            let address = read.host.hasPrefix("[") ? IPAddress(parsing: String(read.host.dropFirst().dropLast())) : nil
            #expect(address != nil && address == IPAddress(parsing: url.host), "\(text): host \(read.host)")
        } else {
            #expect(read.host.lowercased() == url.host, "\(text): host \(read.host)")
        }
        #expect(read.port == Int(url.port), "\(text): port \(read.port)")
        #expect(read.target == url.target, "\(text): target \(read.target), WebhookURL \(url.target)")
    }

    /// The forms where URL readers are known to part ways: numeric hosts in other notations (which
    /// libcurl, as browsers do, reads as IPv4 addresses), trailing dots, case, empty and dotted
    /// paths, queries without a path, IPv6 forms, ports at their edges.
    @Test(arguments: [
        "http://example.com", "HTTPS://Example.COM:8443/a/b?c=d&e", "http://example.com.", "http://example.com?x",
        "http://example.com/a/../b", "http://example.com/./a//b/", "http://example.com/%2e%2e/x", "http://1.2.3.4/",
        "http://0x7f.1/", "http://0177.0.0.1/", "http://2130706433/", "http://127.1/", "http://010.0.0.1/",
        "http://1.2.3.4.5/", "http://256.1.1.1/", "http://0x7f000001/", "http://1e1/", "http://a.0x10/",
        "http://a.10/", "http://10.a/", "http://[::1]/", "http://[::FFFF:127.0.0.1]:1/", "http://[2001:db8::]:65535",
        "http://[6::0]?",
        "http://[0:0::0:1]/", "http://[1:2:3:4:5:6:7:8]/", "http://[::ffff:7f00:1]/",
        "http://example.com:080/", "http://example.com:1/", "https://a-b.c-d.example/?q=/x/../y",
        "http://example.com/;p?q;r", "http://x/y\\z", "http://x/%00", "http://x.", "http://-x-.com/",
    ])
    func everyURLWebhookURLTakesLibcurlReadsTheSame(_ text: String) throws {
        try Self.agree(text)
    }

    /// Random URLs made of the pieces readers disagree on, new ones each run (a disagreement names
    /// its URL; the fuzz target `FuzzWebhookURL` explores further from arbitrary bytes).
    @Test func randomURLsOfTrickyPiecesAreReadTheSameByBoth() throws {
        var generator = SystemRandomNumberGenerator()
        let schemes = ["http", "https", "HTTP", "hTtPs"]
        let labels = [
            "a", "example", "com", "0", "1", "00", "0x", "0x7f", "0X1", "255", "256", "4294967295", "08", "0a", "x-",
            "-x", "xn--bcher-kva", "",
        ]
        let ports = ["", ":", ":0", ":1", ":80", ":080", ":65535", ":65536", ":99999", ":a"]
        let segments = ["", "/", "a", ".", "..", "%2e", "%2E%2e", "?", "?a=1", "&", ";", "//", "%00", "~", "@", ":"]
        for _ in 0..<5000 {
            let host = (0..<Int.random(in: 1...4, using: &generator)).map { _ in
                labels.randomElement(using: &generator)!
            }.joined(separator: ".")
            let path = (0..<Int.random(in: 0...4, using: &generator)).map { _ in
                segments.randomElement(using: &generator)!
            }.joined(separator: Bool.random(using: &generator) ? "/" : "")
            let text =
                schemes.randomElement(using: &generator)! + "://" + host + ports.randomElement(using: &generator)!
                + (path.isEmpty || path.hasPrefix("/") || path.hasPrefix("?") ? path : "/" + path)
            try Self.agree(text)
        }
    }
}
