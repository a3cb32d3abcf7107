import Digest
import MicroHTTP

/// The id of a write's request (docs/AUDIT.md): the `X-Request-Id` the client or its proxy sent,
/// kept to characters that need no escaping anywhere (letters, digits, `-_.:@`) and 128 of them
/// at most, or one made here when none is left. The audit log keeps it, and the response carries
/// it back, so that a log line, a proxy's log and an audit entry can be matched.
enum RequestIDs {
    static let header = "X-Request-Id"
    static let maxLength = 128

    static func id(of request: borrowing Request) -> String {
        let kept = (request.header(header) ?? "").unicodeScalars.lazy.filter(isKept).prefix(maxLength)
        return kept.isEmpty ? made() : String(String.UnicodeScalarView(kept))
    }

    private static func isKept(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", ":", "@": true
        default: false
        }
    }

    /// 128 random bits as a UUID (version 4): what proxies and tracing tools expect an id to look like.
    static func made() -> String { UUIDText.random() }
}
