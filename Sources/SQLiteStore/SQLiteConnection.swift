import CSQLite
import Carousel
import Glibc
import Store

/// One SQLite connection (`sqlite3 *`), owned by this object and closed with it. Not thread-safe
/// (hence `@unchecked Sendable`, to live in a `Lock`):
/// its owner serialises every use (SQLiteStore keeps each connection behind a lock). Prepared
/// statements are kept for the life of the connection, by their SQL.
final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// The busy handler's state; kept here for as long as SQLite may call it.
    private var busyWait: BusyWait?

    /// Opens (creating when missing) the database at `path`, read-write.
    init(path: String) throws(SQLiteError) {
        var opened: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let result = sqlite3_open_v2(path, &opened, flags, nil)
        guard result == SQLITE_OK, let opened else {
            let error = SQLiteError(code: result, handle: opened, during: "opening \(path)")
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
    }

    deinit {
        statements.removeAll()  // finalized before the connection closes
        sqlite3_close_v2(handle)
    }

    /// Runs SQL without results (pragmas, schema, BEGIN/COMMIT), one or more statements.
    func execute(_ sql: String) throws(SQLiteError) {
        let result = sqlite3_exec(handle, sql, nil, nil, nil)
        guard result == SQLITE_OK else { throw SQLiteError(code: result, handle: handle, during: sql) }
    }

    /// The prepared statement for `sql`, reset and with its bindings cleared.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] {
            cached.reset()
            return cached
        }
        var prepared: OpaquePointer?
        let result = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard result == SQLITE_OK, let prepared else { throw SQLiteError(code: result, handle: handle, during: sql) }
        let statement = SQLiteStatement(prepared, connection: handle, sql: sql)
        statements[sql] = statement
        return statement
    }

    /// Waits up to `timeout` of real time for a lock another connection holds, then fails with
    /// SQLITE_BUSY. SQLite's own `busy_timeout` adds up the sleeps it asked for, not the time that
    /// passed: on a loaded machine every sleep overshoots, and a 5 s timeout took more than 10.
    func waitWhileBusy(upTo timeout: Duration) {
        let wait = BusyWait(timeout: timeout)
        busyWait = wait
        sqlite3_busy_handler(
            handle,
            { context, attempts in
                guard let context else { return 0 }
                return Unmanaged<BusyWait>.fromOpaque(context).takeUnretainedValue().retry(attempts: attempts) ? 1 : 0
            }, Unmanaged.passUnretained(wait).toOpaque())
    }

    /// True when SQLite opened the file read-only (its permissions did not allow writing).
    var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Runs `body` in a transaction (BEGIN IMMEDIATE: the write lock is taken first, so a busy
    /// store fails here, not halfway); rolls back when `body` throws.
    func transaction<Result>(_ body: () throws(SQLiteError) -> Result) throws(SQLiteError) -> Result {
        // Prepared once and kept, as every statement here: `execute` would parse them again for
        // every command (docs/PERFORMANCE.md, "What a command costs").
        try statement("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try statement("COMMIT").run()
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// How long a connection has waited for a lock, on the monotonic clock; used on the connection's
/// thread only, from inside SQLite's calls.
private final class BusyWait {
    let timeout: Duration
    private var started = ContinuousClock.now
    /// SQLite's own back-off: short sleeps first, for locks held only a moment.
    private static let sleeps: [Duration] = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50].map { .milliseconds($0) }

    init(timeout: Duration) { self.timeout = timeout }

    /// Called by SQLite before each retry of one locking event (`attempts` before this one):
    /// sleeps and says to retry while the timeout has not passed.
    func retry(attempts: Int32) -> Bool {
        let now = ContinuousClock.now
        if attempts == 0 { started = now }
        let left = timeout - (now - started)
        guard left > .zero else { return false }
        let step = attempts < Self.sleeps.count ? Self.sleeps[Int(attempts)] : .milliseconds(100)
        let sleep = min(step, left)
        usleep(UInt32(sleep.nanoseconds / 1000))
        return true
    }
}

/// A prepared statement of a `SQLiteConnection`; bound by position from 1.
final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    let sql: String

    fileprivate init(_ handle: OpaquePointer, connection: OpaquePointer, sql: String) {
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Ends a run early (a read that stopped before the last row), releasing its locks.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Binds `values` to ?1, ?2, …; nil binds NULL.
    func bind(_ values: SQLiteValue?...) throws(SQLiteError) -> SQLiteStatement {
        try bind(values)
    }

    /// Binds `values` to ?1, ?2, …; nil binds NULL.
    func bind(_ values: [SQLiteValue?]) throws(SQLiteError) -> SQLiteStatement {
        for (offset, value) in values.enumerated() {
            let position = Int32(offset + 1)
            let result: Int32 =
                switch value {
                case nil: sqlite3_bind_null(handle, position)
                case .integer(let integer)?: sqlite3_bind_int64(handle, position, integer)
                case .text(let text)?: csqlite_bind_text(handle, position, text, -1)
                case .blob(let bytes)?:
                    bytes.withUnsafeBytes { csqlite_bind_blob(handle, position, $0.baseAddress, Int32($0.count)) }
                }
            guard result == SQLITE_OK else { throw SQLiteError(code: result, handle: connection, during: sql) }
        }
        return self
    }

    /// Steps once: true with a row to read, false when done.
    func step() throws(SQLiteError) -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let result:
            let error = SQLiteError(code: result, handle: connection, during: sql)
            sqlite3_reset(handle)  // releases the statement's locks at once
            throw error
        }
    }

    /// Runs a statement without rows.
    func run() throws(SQLiteError) {
        while try step() {}
    }

    func integer(_ column: Int32) -> Int64? {
        sqlite3_column_type(handle, column) == SQLITE_NULL ? nil : sqlite3_column_int64(handle, column)
    }

    func text(_ column: Int32) -> String? {
        sqlite3_column_text(handle, column).map { String(cString: $0) }
    }

    /// The column's bytes (a BLOB), copied; empty for an empty or NULL value.
    func blob(_ column: Int32) -> [UInt8] {
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let bytes = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: bytes, count: count))
    }
}

/// A value to bind.
enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
}

/// A statement's current row, by position (`Store`'s records decode themselves from it).
extension SQLiteStatement: SQLRow {
    func integer(_ column: Int) -> Int64? { integer(Int32(column)) }
    func text(_ column: Int) -> String? { text(Int32(column)) }
}
