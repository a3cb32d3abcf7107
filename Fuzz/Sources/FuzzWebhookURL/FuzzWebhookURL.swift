// The hand-written reader of webhook URLs (`WebhookURL`, docs/WEBHOOKS.md) and the address checks
// behind it. A URL it takes must be what a delivery can connect to: a host of name characters or
// an IPv6 address, a port from 1 to 65535, a request target starting with '/', nothing outside
// printable ASCII; reading its own parts back gives the same URL. Address literals are never
// looked up here (no network in a fuzz run). Input: the URL's bytes.
import Webhooks

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebhookURL(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let url = try? WebhookURL(text) else { return 0 }
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
