import MicroHTTP

/// A resource as pre-built responses: the 200, and the 304 for clients that already have it.
struct Representation: Sendable {
    let etag: String
    let ok: PreparedResponse
    let notModified: PreparedResponse

    /// `body` with `headers` (ETag added), and the matching 304. The 304 is built with the 200's
    /// body, which libmicrohttpd does not send for a 304, only its length: the one Content-Length
    /// RFC 9110 allows on a 304 (libmicrohttpd would say 0).
    init(etag: String, body: [UInt8], headers: [HTTPHeader]) {
        self.etag = etag
        let headers = headers + [HTTPHeader("ETag", etag)]
        ok = PreparedResponse(Response(status: 200, headers: headers, body: body))
        notModified = PreparedResponse(
            Response(status: 304, headers: headers.filter { $0.name != "Content-Type" }, body: body))
    }

    private init(etag: String, ok: PreparedResponse, notModified: PreparedResponse) {
        self.etag = etag
        self.ok = ok
        self.notModified = notModified
    }

    /// The same responses as new libmicrohttpd responses, for one thread to queue (`ReadCache`).
    func copy() -> Representation {
        Representation(
            etag: etag, ok: PreparedResponse(ok.response), notModified: PreparedResponse(notModified.response))
    }

    /// 304 when `ifNoneMatch` names this version (RFC 9110's weak comparison), else 200.
    func response(ifNoneMatch: String?) -> PreparedResponse {
        guard let ifNoneMatch else { return ok }
        return EntityTag.matches(ifNoneMatch, etag) ? notModified : ok
    }
}
