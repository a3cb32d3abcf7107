import MicroHTTP

/// A resource as pre-built responses: the 200, and the 304 for clients that already have it.
struct Representation: Sendable {
    let etag: String
    let ok: PreparedResponse
    let notModified: PreparedResponse

    /// `body` with `headers` (ETag added), kept in `storage`, and the matching 304, which says
    /// the 200's length without keeping its bytes.
    init(etag: String, body: [UInt8], headers: [HTTPHeader], storage: BodyStorage = .buffer) {
        self.etag = etag
        let headers = headers + [HTTPHeader("ETag", etag)]
        ok = PreparedResponse(Response(status: 200, headers: headers, body: body), body: storage)
        notModified = Self.notModified(headers, of: ok)
    }

    private init(etag: String, ok: PreparedResponse) {
        self.etag = etag
        self.ok = ok
        notModified = Self.notModified(ok.headers, of: ok)
    }

    private static func notModified(_ headers: [HTTPHeader], of ok: PreparedResponse) -> PreparedResponse {
        PreparedResponse(notModified: headers.filter { $0.name != "Content-Type" }, bodyLength: ok.bodyCount)
    }

    /// The same responses as new libmicrohttpd responses, for one thread to queue (`ReadCache`).
    func copy() -> Representation {
        Representation(etag: etag, ok: PreparedResponse(ok.response))
    }

    /// 304 when `ifNoneMatch` names this version (RFC 9110's weak comparison), else 200.
    func response(ifNoneMatch: String?) -> PreparedResponse {
        guard let ifNoneMatch else { return ok }
        return EntityTag.matches(ifNoneMatch, etag) ? notModified : ok
    }
}
