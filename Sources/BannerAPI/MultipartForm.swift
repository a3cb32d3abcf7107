/// The one file of a `multipart/form-data` body (RFC 7578), as the admin page's upload sends it:
/// the first part with a `filename`, its bytes and its declared type. Hand-written (the service
/// uses no MHD_PostProcessor, docs/ARCHITECTURE.md), fuzzed by Fuzz/FuzzMultipartForm.
struct MultipartFile: Equatable {
    let bytes: [UInt8]
    let contentType: String?
    let filename: String

    /// The boundary a `Content-Type: multipart/form-data; boundary=…` names; nil for any other type.
    static func boundary(ofContentType contentType: String) -> String? {
        let parameters = contentType.split(separator: ";").map { String($0).trimmingCharacters(in: " \t") }
        guard parameters.first?.lowercased() == "multipart/form-data" else { return nil }
        for parameter in parameters.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, pair[0].lowercased() == "boundary" else { continue }
            var value = pair[1]
            if value.count >= 2 && value.hasPrefix("\"") && value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            // RFC 2046 §5.1.1: 1 to 70 characters.
            return (1...70).contains(value.utf8.count) ? value : nil
        }
        return nil
    }

    /// The file in `body`, or why there is none, for a 400.
    static func parse(_ body: [UInt8], boundary: String) throws(Problem) -> MultipartFile {
        let delimiter = Array("--\(boundary)".utf8)
        guard var position = find(delimiter, in: body, from: 0) else {
            throw Problem.badRequest("the form has no part: no '--\(boundary)' line")
        }
        while true {
            position += delimiter.count
            // `--` after the delimiter ends the form.
            if body.count >= position + 2 && body[position] == UInt8(ascii: "-")
                && body[position + 1] == UInt8(ascii: "-")
            {
                break
            }
            guard let headersStart = lineEnd(in: body, from: position),
                let headersEnd = find(Array("\r\n\r\n".utf8), in: body, from: headersStart - 2)
            else { throw Problem.badRequest("a part of the form has no end to its headers (a blank line)") }
            // A part without headers: its blank line is the delimiter line's own end.
            let headers =
                headersEnd > headersStart ? String(decoding: body[headersStart..<headersEnd], as: UTF8.self) : ""
            let contentStart = headersEnd + 4
            guard let next = find(Array("\r\n".utf8) + delimiter, in: body, from: contentStart) else {
                throw Problem.badRequest("a part of the form does not end with '--\(boundary)'")
            }
            let (filename, contentType) = describe(headers)
            if let filename {
                return MultipartFile(
                    bytes: Array(body[contentStart..<next]), contentType: contentType, filename: filename)
            }
            position = next + 2
        }
        throw Problem.badRequest("the form has no file: send the image as a part with a filename (<input type=file>)")
    }

    /// The part's `filename` (from Content-Disposition) and Content-Type.
    private static func describe(_ headers: String) -> (filename: String?, contentType: String?) {
        var filename: String?
        var contentType: String?
        for line in headers.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let name = String(pair[0]).lowercased().trimmingCharacters(in: " \t")
            let value = String(pair[1]).trimmingCharacters(in: " \t")
            if name == "content-type" {
                contentType = value
            } else if name == "content-disposition" {
                for parameter in value.split(separator: ";").dropFirst() {
                    let field = parameter.split(separator: "=", maxSplits: 1).map {
                        String($0).trimmingCharacters(in: " \t")
                    }
                    if field.count == 2 && field[0].lowercased() == "filename" {
                        filename = field[1].hasPrefix("\"") ? String(field[1].dropFirst().dropLast()) : field[1]
                    }
                }
            }
        }
        return (filename, contentType)
    }

    /// The position after the CRLF that ends the line at `start` (whitespace before it allowed).
    private static func lineEnd(in body: [UInt8], from start: Int) -> Int? {
        var index = start
        while index < body.count && (body[index] == 0x20 || body[index] == 0x09) { index += 1 }
        guard index + 1 < body.count, body[index] == 0x0D, body[index + 1] == 0x0A else { return nil }
        return index + 2
    }

    private static func find(_ needle: [UInt8], in body: [UInt8], from start: Int) -> Int? {
        guard let first = needle.first, start >= 0, body.count >= needle.count else { return nil }
        var index = start
        let last = body.count - needle.count
        while index <= last {
            if body[index] == first && body[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}
