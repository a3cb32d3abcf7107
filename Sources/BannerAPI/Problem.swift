import JSON
import MicroHTTP

/// An error answer in RFC 9457 form: `{"type": "about:blank", "title": …, "status": …, "detail": …}`.
struct Problem: Error {
    let status: Int
    let detail: String
    var headers: [HTTPHeader] = []

    static let mediaType = "application/problem+json"

    var response: Response {
        var object = JSONObject()
        object.add("type", "about:blank")
        object.add("title", Self.title(for: status))
        object.add("status", status)
        object.add("detail", detail)
        return Response(
            status: status, headers: [HTTPHeader("Content-Type", Self.mediaType)] + headers,
            body: object.line)
    }

    /// RFC 9110's reason phrases for the statuses this service answers.
    static func title(for status: Int) -> String {
        switch status {
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 422: "Unprocessable Content"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        default: "HTTP \(status)"
        }
    }

    static func badRequest(_ detail: String) -> Problem { Problem(status: 400, detail: detail) }
    static func unprocessable(_ detail: String) -> Problem { Problem(status: 422, detail: detail) }
}
