import CMicroHTTPD

/// An HTTP response as plain values. Queued through a `PreparedResponse`.
public struct Response: Sendable {
    public var status: Int
    public var headers: [HTTPHeader]
    public var body: [UInt8]

    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}

/// A response built once as a libmicrohttpd response and queued any number of times, from any
/// thread (libmicrohttpd reference-counts it and copies nothing per request). Build one per
/// content version for hot reads; build one per request for everything else.
public final class PreparedResponse: @unchecked Sendable {
    /// The response this was built from (status, headers and body, as values).
    public let response: Response
    public var status: Int { response.status }
    /// The MHD_Response this object owns; immutable after init, so sharing it is safe.
    let handle: OpaquePointer

    /// Headers with a CR or LF in them are refused by libmicrohttpd and left out. For HEAD
    /// requests and 304 answers libmicrohttpd sends the body's length but not the body.
    public init(_ response: Response) {
        self.response = response
        handle = response.body.withUnsafeBytes { bytes in
            MHD_create_response_from_buffer(
                bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress),
                MHD_ResponseMemoryMode.RESPMEM_MUST_COPY)
        }
        for header in response.headers {
            _ = MHD_add_response_header(handle, header.name, header.value)
        }
    }

    deinit {
        MHD_destroy_response(handle)
    }
}
