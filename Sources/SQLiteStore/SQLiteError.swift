import CSQLite

/// A SQLite call that did not return SQLITE_OK (or SQLITE_ROW/SQLITE_DONE where those are the
/// answer): its extended result code, SQLite's message, and what was being done.
struct SQLiteError: Error, CustomStringConvertible {
    let code: Int32
    let message: String
    let during: String

    /// The primary result code (SQLITE_BUSY for SQLITE_BUSY_SNAPSHOT, …).
    var primaryCode: Int32 { code & 0xFF }

    var description: String { "\(during): \(message) (SQLite result \(code))" }

    init(code: Int32, message: String, during: String) {
        self.code = code
        self.message = message
        self.during = during
    }

    /// The error of the last call on `handle`.
    init(code: Int32, handle: OpaquePointer?, during: String) {
        let message = handle.flatMap { sqlite3_errmsg($0) }.map { String(cString: $0) }
        self.init(code: code, message: message ?? String(cString: sqlite3_errstr(code)), during: during)
    }
}
