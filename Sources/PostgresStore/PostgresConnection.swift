import CPostgres
import Glibc
import Store

/// One libpq connection (`PGconn *`), owned by this object and closed with it. Not thread-safe
/// (hence `@unchecked Sendable`, to live in a `Lock`): its owner serialises every use.
/// Statements with parameters are prepared once per connection, by their SQL.
final class PostgresConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var prepared: [String: String] = [:]

    /// Connects with `parameters`, keyword and value, processed in order (a later keyword wins);
    /// the first `dbname` may be a whole connection URI (libpq expands it in place).
    init(_ parameters: [(keyword: String, value: String)]) throws(PostgresError) {
        let connection = withCStrings(parameters.map(\.keyword)) { keywords in
            withCStrings(parameters.map(\.value)) { values in cpq_connectdbParams(keywords, values, 1) }
        }
        guard let connection else {
            throw PostgresError(sqlState: "", message: "out of memory", during: "connecting", brokeConnection: true)
        }
        guard cpq_status(connection) == CONNECTION_OK else {
            let message = Self.message(cpq_errorMessage(connection))
            cpq_finish(connection)
            throw PostgresError(sqlState: "", message: message, during: "connecting", brokeConnection: true)
        }
        handle = connection
    }

    deinit {
        cpq_finish(handle)
    }

    /// False once the connection broke; it cannot be used again.
    var isOpen: Bool { cpq_status(handle) == CONNECTION_OK }

    /// The server's major version and the like, for messages: `15.18`.
    var serverVersion: String {
        let number = Int(cpq_serverVersion(handle))
        return "\(number / 10000).\(number % 10000)"
    }

    /// Runs SQL without parameters: one or more statements (BEGIN, COMMIT, LISTEN, schema).
    @discardableResult
    func run(_ sql: String) throws(PostgresError) -> [[String?]] {
        try rows(of: cpq_exec(handle, sql), during: sql)
    }

    /// Runs one statement with parameters ($1, $2, … in text form; nil is NULL), prepared on
    /// first use; returns its rows, each column as text or NULL.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?] = []) throws(PostgresError) -> [[String?]] {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count + 1)"
            _ = try rows(of: cpq_prepare(handle, name, sql, Int32(parameters.count), nil), during: sql)
            prepared[sql] = name
        }
        let result = withOptionalCStrings(parameters) { values in
            cpq_execPrepared(handle, name, Int32(parameters.count), values, nil, nil, 0)
        }
        return try rows(of: result, during: sql)
    }

    // MARK: Notifications

    /// The socket to wait on for notifications.
    var socket: Int32 { cpq_socket(handle) }

    /// Reads whatever the server sent (notifications among it) without waiting.
    func consumeInput() throws(PostgresError) {
        guard cpq_consumeInput(handle) == 1 else { throw failure(during: "reading notifications") }
    }

    /// The next notification read so far: its payload.
    func nextNotification() -> String? {
        guard let notification = cpq_notifies(handle) else { return nil }
        defer { cpq_freemem(notification) }
        return notification.pointee.extra.map { String(cString: $0) } ?? ""
    }

    // MARK: Results

    /// The rows of `result` (freed here), or the error it carries.
    private func rows(of result: OpaquePointer?, during sql: String) throws(PostgresError) -> [[String?]] {
        guard let result else { throw failure(during: sql) }
        defer { cpq_clear(result) }
        let status = cpq_resultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            throw PostgresError(
                sqlState: cpq_resultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? "",
                message: Self.message(cpq_resultErrorMessage(result)), during: Self.shortened(sql),
                brokeConnection: !isOpen)
        }
        let columns = cpq_nfields(result)
        return (0..<cpq_ntuples(result)).map { row in
            (0..<columns).map { column in
                cpq_getisnull(result, row, column) == 1 ? nil : String(cString: cpq_getvalue(result, row, column))
            }
        }
    }

    private func failure(during: String) -> PostgresError {
        PostgresError(
            sqlState: "", message: Self.message(cpq_errorMessage(handle)), during: Self.shortened(during),
            brokeConnection: !isOpen)
    }

    /// libpq's messages end with a newline and may span lines: one line for logs.
    private static func message(_ text: UnsafePointer<CChar>?) -> String {
        guard let text else { return "unknown error" }
        return String(cString: text).split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// The first line of a statement, for messages.
    private static func shortened(_ sql: String) -> String {
        let first = sql.split(separator: "\n").first.map(String.init) ?? sql
        return first.count > 80 ? String(first.prefix(80)) + "…" : first
    }
}

/// `strings` as C strings for the duration of `body`, in a NULL-terminated array.
private func withCStrings<Result>(
    _ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    withOptionalCStrings(strings.map(Optional.some), body)
}

private func withOptionalCStrings<Result>(
    _ strings: [String?], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> Result
) -> Result {
    let copies: [UnsafeMutablePointer<CChar>?] = strings.map { $0.flatMap { strdup($0) } }
    defer { for copy in copies { free(copy) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress!) }
}

/// A row as libpq gives it, every column text (or NULL), read by position (`Store`'s records
/// decode themselves from it).
struct PostgresRow: SQLRow {
    let columns: [String?]

    init(_ columns: [String?]) { self.columns = columns }

    func integer(_ column: Int) -> Int64? { columns[column].flatMap { Int64($0) } }
    func text(_ column: Int) -> String? { columns[column] }
}
