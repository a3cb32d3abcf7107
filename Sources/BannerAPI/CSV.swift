/// Comma-separated values as RFC 4180 writes them, for the reports that offer `text/csv`.
enum CSV {
    /// One record: its fields joined, each quoted when it must be, ended by CRLF.
    static func record(_ fields: [String]) -> String {
        fields.map(field).joined(separator: ",") + "\r\n"
    }

    /// A field quoted when it holds a comma, a quote or a line break. A field starting with what a
    /// spreadsheet takes for a formula (`=`, `+`, `-`, `@`, a tab or CR) gets a `'` before it:
    /// names and ids come from strangers, and a report is opened in spreadsheets (OWASP, CSV
    /// injection). Numbers are written by the caller and never start so, but for their sign.
    static func field(_ text: String) -> String {
        var text = text
        if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first), Double(text) == nil {
            text = "'" + text
        }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
    }
}
