import CCurl
import Digest
import Glibc
import Store
import TimeZones
import Webhooks

/// Makes one attempt of a webhook delivery (docs/WEBHOOKS.md): a POST of its body, signed, with
/// libcurl. The address curl connects to is checked at that moment (`CURLOPT_OPENSOCKETFUNCTION`)
/// with the rule the URL was checked with when the webhook was created: a name that resolved to a
/// public address then and to a private one now (DNS rebinding) is refused, unless
/// `allowPrivate`. No redirect is followed, no proxy from the environment is used, only http and
/// https are spoken; any 2xx within `timeout` is a delivery.
public struct WebhookSender: Sendable {
    public let allowPrivate: Bool
    public let timeout: Duration
    private let clock: @Sendable () -> Timestamp

    public init(
        allowPrivate: Bool, timeout: Duration = DeliveryRetry.timeout,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now
    ) {
        self.allowPrivate = allowPrivate
        self.timeout = timeout
        self.clock = clock
    }

    /// `X-Carousel-Signature`'s value: `t=UNIX,v1=HEX(HMAC-SHA256(secret, "t.body"))`.
    public static func signature(secret: String, at seconds: Int64, body: String) -> String {
        "t=\(seconds),v1=" + HMACSHA256.hex(key: Array(secret.utf8), message: Array("\(seconds).\(body)".utf8))
    }

    /// The headers `delivery` is sent with, signed at `seconds` (Unix time).
    public static func headers(of delivery: DueDelivery, at seconds: Int64) -> [String] {
        [
            "Content-Type: application/json",
            "User-Agent: banner-carousel-webhooks/1",
            "X-Carousel-Event: \(delivery.type)",
            "X-Carousel-Delivery: \(delivery.event)",
            "X-Carousel-Signature: \(signature(secret: delivery.secret, at: seconds, body: delivery.body))",
            "Expect:",  // no 100-continue round trip
        ]
    }

    /// POSTs `delivery` and says how it went. Blocks for at most `timeout`.
    public func send(_ delivery: DueDelivery) -> DeliveryAttempt {
        let started = clock()
        if let failure = Self.startFailure {
            return DeliveryAttempt(
                at: started, status: nil, error: "libcurl cannot be used: \(failure) (install libcurl4)")
        }
        guard let handle = ccurl_easy_init() else {
            return DeliveryAttempt(at: started, status: nil, error: "libcurl could not make a handle")
        }
        defer { ccurl_easy_cleanup(handle) }
        var headers: UnsafeMutablePointer<curl_slist>?
        for line in Self.headers(of: delivery, at: started.nanosecondsSinceEpoch / 1_000_000_000) {
            headers = ccurl_slist_append(headers, line)
        }
        defer { ccurl_slist_free_all(headers) }
        let connecting = ConnectCheck(allowPrivate: allowPrivate)
        var errorText = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let body = Array(delivery.body.utf8)
        let milliseconds = Int(timeout.nanoseconds / 1_000_000)
        let code = withExtendedLifetime(connecting) {
            body.withUnsafeBufferPointer { body in
                errorText.withUnsafeMutableBufferPointer { errorText in
                    let options: [CURLcode] = [
                        ccurl_set_string(handle, CURLOPT_URL, delivery.url),
                        ccurl_set_long(handle, CURLOPT_POST, 1),
                        ccurl_set_pointer(
                            handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: body.baseAddress)),
                        ccurl_set_long(handle, CURLOPT_POSTFIELDSIZE, body.count),
                        ccurl_set_headers(handle, headers),
                        ccurl_set_long(handle, CURLOPT_TIMEOUT_MS, milliseconds),
                        ccurl_set_long(handle, CURLOPT_NOSIGNAL, 1),
                        ccurl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                        // The target as the webhook's URL has it (`WebhookURL`), dot segments too.
                        ccurl_set_long(handle, CURLOPT_PATH_AS_IS, 1),
                        ccurl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                        ccurl_set_string(handle, CURLOPT_PROXY, ""),
                        ccurl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorText.baseAddress),
                        ccurl_set_write(handle, Self.discard),
                        ccurl_set_open_socket(handle, Self.openSocket, Unmanaged.passUnretained(connecting).toOpaque()),
                    ]
                    if let refused = options.first(where: { $0 != CURLE_OK }) { return refused }
                    return ccurl_easy_perform(handle)
                }
            }
        }
        let at = clock()
        guard code == CURLE_OK else {
            let detail = String(decoding: errorText.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let error =
                connecting.refused
                ?? (code == CURLE_OPERATION_TIMEDOUT
                    ? "no answer within \(milliseconds / 1000) s"
                    : detail.isEmpty ? String(cString: ccurl_easy_strerror(code)) : detail)
            return DeliveryAttempt(at: at, status: nil, error: error)
        }
        var status = 0
        _ = ccurl_response_code(handle, &status)
        return DeliveryAttempt(at: at, status: status, error: nil)
    }

    /// libcurl opened and curl_global_init run, once per process, at the first delivery (not at
    /// start: CCurl/shim.h); nil when they were, else why not.
    private static let startFailure: String? = ccurl_start().map { String(cString: $0) }

    /// The receiver's answer is not kept.
    private static let discard: ccurl_write = { _, size, count, _ in size * count }

    /// Opens the socket curl is about to connect, if the address is allowed.
    private static let openSocket: ccurl_open_socket = { context, _, address in
        guard let context, let address else { return CURL_SOCKET_BAD }
        let check = Unmanaged<ConnectCheck>.fromOpaque(context).takeUnretainedValue()
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = ccurl_address_bytes(address, &bytes)
        guard count > 0, let ip = IPAddress(bytes: Array(bytes.prefix(Int(count)))) else {
            check.refused = "connecting to an address of family \(address.pointee.family), not IP"
            return CURL_SOCKET_BAD
        }
        if !check.allowPrivate, let reason = ip.notPublic {
            check.refused =
                "refused to connect to \(ip): \(reason) (the name leads to a non-public address now; webhookAllowPrivate allows it)"
            return CURL_SOCKET_BAD
        }
        return socket(
            address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    }
}

/// What the socket callback decides with and says back: one attempt's, on its thread only.
private final class ConnectCheck {
    let allowPrivate: Bool
    var refused: String?

    init(allowPrivate: Bool) { self.allowPrivate = allowPrivate }
}
