// The hand-written query-string reader (`QueryString`, docs/ARCHITECTURE.md "Query strings")
// against libmicrohttpd's own decoder, on the same bytes. The parameters must be the parts
// between the '&'s (a last empty one starts none), each split at its first '=', and each name and
// value what `MHD_http_unescape` makes of it after '+' is read as a space (as libmicrohttpd's
// `MHD_parse_arguments_` did before the server took queries from it); `values` must find the
// first of each name. Any difference stops the run (a finding). Input: the query's bytes (a
// target holds no NUL: the server copies the query up to the C string's end).
import CMicroHTTPD

@testable import MicroHTTP

/// What libmicrohttpd makes of one name or value.
private func libmicrohttpdDecoded(_ part: ArraySlice<UInt8>) -> String {
    var text = part.map { CChar(bitPattern: $0 == UInt8(ascii: "+") ? UInt8(ascii: " ") : $0) } + [0]
    let count = text.withUnsafeMutableBufferPointer { MHD_http_unescape($0.baseAddress) }
    return String(decoding: text[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzQueryString(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard !bytes.contains(0) else { return 0 }
    let query = QueryString(bytes: bytes)
    var parts = bytes.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false)
    if parts.last?.isEmpty == true { parts.removeLast() }
    let expected = parts.map { part -> (name: String, value: String?) in
        guard let equals = part.firstIndex(of: UInt8(ascii: "=")) else { return (libmicrohttpdDecoded(part), nil) }
        return (libmicrohttpdDecoded(part[..<equals]), libmicrohttpdDecoded(part[(equals + 1)...]))
    }
    let read = query.parameters
    precondition(
        read.count == expected.count && zip(read, expected).allSatisfy { $0.name == $1.name && $0.value == $1.value },
        "read \(read) where libmicrohttpd reads \(expected), from \(bytes)")
    if let first = expected.first, let last = expected.last {
        let firstOf = { (name: String) in expected.first { $0.name == name }.map { $0.value } ?? nil }
        let (one, other) = query.values(first.name, last.name)
        precondition(one == firstOf(first.name) && other == firstOf(last.name), "values differ from the list: \(bytes)")
    }
    return 0
}
