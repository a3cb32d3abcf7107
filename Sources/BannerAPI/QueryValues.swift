import Carousel
import MicroHTTP
import TimeZones

/// Query parameters read the same way by every report (stats, the audit log, webhook deliveries).
enum QueryValues {
    /// `text` as an RFC 3339 date-time; nil when absent, a 400 naming the parameter when unreadable.
    static func time(_ text: String?, name: String) throws(Problem) -> Timestamp? {
        guard let text else { return nil }
        guard let time = Timestamp(rfc3339: text) else {
            throw Problem.badRequest("\(name) '\(text)' is not an RFC 3339 date-time (2026-12-01T00:00:00Z)")
        }
        return time
    }

    /// `text` as a whole number in `range`; nil when absent, a 400 naming the parameter otherwise.
    static func number(_ text: String?, name: String, in range: ClosedRange<Int64>) throws(Problem) -> Int64? {
        guard let text else { return nil }
        guard let number = Int64(text), range.contains(number) else {
            throw Problem.badRequest(
                "\(name) '\(text)' is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// The screen's audience (`?audience=NAME`, docs/AUDIENCES.md): nil when absent, a 400 when
    /// not a name (an empty one included: a page that has no audience leaves the parameter out).
    static func audience(of request: borrowing Request) throws(Problem) -> String? {
        try audience(request.queryParameter("audience"))
    }

    /// `text` of `?audience=` checked as `audience(of:)` checks it.
    static func audience(_ text: String?) throws(Problem) -> String? {
        guard let text else { return nil }
        guard Audiences.isValidName(text) else {
            throw Problem.badRequest("audience '\(text.prefix(80))' is invalid: \(Audiences.rule)")
        }
        return text
    }

    /// Whether the request asks for its report as CSV (`Accept: text/csv`) rather than JSON.
    static func asksForCSV(_ request: borrowing Request) -> Bool {
        (request.header("Accept") ?? "").lowercased().contains("text/csv")
    }
}
