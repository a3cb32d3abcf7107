// The hand-written reader of webhook URLs (`WebhookURL`, docs/WEBHOOKS.md) and the address checks
// behind it. A URL it takes must be what a delivery can connect to: a host of name characters or
// an IPv6 address, a port from 1 to 65535, a request target starting with '/', nothing outside
// printable ASCII; reading its own parts back gives the same URL; and libcurl (`curl_url`, the
// parser a delivery's CURLOPT_URL goes through) reads the same scheme, host, port and target: what
// is checked is what is connected to. Address literals are never looked up here (no network in a
// fuzz run). Input: the URL's bytes.
import CCurl
import Webhooks

/// libcurl opened once, for the oracle.
let curlStarted: Void = { precondition(ccurl_start() == nil, "libcurl cannot be loaded") }()

/// `url`, which `WebhookURL` took from `text`, as libcurl reads `text`: the same parts.
func libcurlAgrees(_ text: String, _ url: WebhookURL) {
    _ = curlStarted
    var (scheme, host, port, path, query):
        (
            UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?,
            UnsafeMutablePointer<CChar>?, UnsafeMutablePointer<CChar>?
        ) = (nil, nil, nil, nil, nil)
    let code = ccurl_url_parts(text, &scheme, &host, &port, &path, &query)
    precondition(code == 0, "libcurl refuses \(text) (CURLUcode \(code)), which WebhookURL takes")
    let parts = [scheme, host, port, path, query]
    defer { for part in parts { part.map(ccurl_free) } }
    let read = parts.map { $0.map { String(cString: $0) } }
    precondition(read[0] == (url.secure ? "https" : "http"), "\(text): libcurl's scheme \(read[0] ?? "")")
    let curlHost = read[1]?.lowercased() ?? ""
    if url.hostIsIPv6 {
        // The same address (libcurl writes it shorter only when that is shorter than as given).
        let address = curlHost.hasPrefix("[") ? IPAddress(parsing: String(curlHost.dropFirst().dropLast())) : nil
        precondition(address != nil && address == IPAddress(parsing: url.host), "\(text): libcurl's host \(curlHost)")
    } else {
        precondition(curlHost == url.host, "\(text): libcurl's host \(curlHost), WebhookURL's \(url.host)")
    }
    precondition(read[2].flatMap { Int($0) } == Int(url.port), "\(text): libcurl's port \(read[2] ?? "")")
    let target = (read[3] ?? "") + (read[4].map { "?" + $0 } ?? "")
    precondition(target == url.target, "\(text): libcurl's target \(target), WebhookURL's \(url.target)")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebhookURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let url = try? WebhookURL(text) else { return 0 }
    libcurlAgrees(text, url)
    precondition(!url.host.isEmpty && url.port > 0, "no host or port: \(text)")
    precondition(url.target.first == "/", "a target not starting with '/': \(text)")
    precondition(text.utf8.allSatisfy { (0x21...0x7E).contains($0) }, "took a byte outside printable ASCII")
    let host = url.hostIsIPv6 ? "[\(url.host)]" : url.host
    let rebuilt = "\(url.secure ? "https" : "http")://\(host):\(url.port)\(url.target)"
    guard let again = try? WebhookURL(rebuilt) else { preconditionFailure("its own parts refused: \(rebuilt)") }
    precondition(
        again.host == url.host && again.port == url.port && again.target == url.target && again.secure == url.secure,
        "read back differently: \(text) → \(rebuilt)")
    if let literal = IPAddress(parsing: url.host) {
        precondition(IPAddress(parsing: literal.description) == literal, "an address printed and read differs")
        _ = literal.notPublic
        _ = try? WebhookAddresses.resolve(url, allowPrivate: false)
    }
    return 0
}
