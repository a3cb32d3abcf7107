import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Platform
import Store
import Threading
import TimeZones

extension SQLiteStore {
    // MARK: Connections

    /// Runs `body` on a connection, alone on it; SQLite's errors become what an operator reads.
    func on<Result>(
        _ connection: Lock<SQLiteConnection>, _ body: (SQLiteConnection) throws(SQLiteError) -> Result
    ) throws(StoreError) -> Result {
        do {
            return try connection.withLock { connection throws(SQLiteError) in try body(connection) }
        } catch {
            throw Self.failure(error, path: path, busyTimeout: busyTimeout)
        }
    }

    static func connect(_ path: String, synchronous: String, busyTimeout: Duration) throws(SQLiteError)
        -> SQLiteConnection
    {
        let connection = try SQLiteConnection(path: path)
        connection.waitWhileBusy(upTo: busyTimeout)
        try connection.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous); PRAGMA foreign_keys = ON")
        return connection
    }

    /// What an operator reads for a failed SQLite call, by result code.
    static func failure(_ error: SQLiteError, path: String, busyTimeout: Duration) -> StoreError {
        switch error.primaryCode {
        case SQLITE_BUSY, SQLITE_LOCKED:
            .unavailable(
                "the SQLite store \(path) stayed locked by another connection for \(busyTimeout.seconds) s "
                    + "(\(error.message)); find the process holding it (a backup, a sqlite3 shell) and end its transaction"
            )
        case SQLITE_READONLY:
            .unavailable(
                "the SQLite store \(path) is read-only (\(error.message)); make the file, its -wal and -shm files "
                    + "and its folder writable by this process (uid \(getuid())), then restart banner-server")
        case SQLITE_FULL:
            .unavailable("the disk holding the SQLite store \(path) is full (\(error.message)); free space on it")
        case SQLITE_IOERR, SQLITE_CANTOPEN:
            .unavailable("the SQLite store \(path) cannot be read or written: \(error.message)")
        case SQLITE_NOTADB, SQLITE_CORRUPT:
            .unusable("\(path) is not a usable SQLite store: \(error.message); move it away or give another --store")
        default:
            .unavailable("the SQLite store \(path) failed: \(error)")
        }
    }

    static func createFolder(of path: String) throws(StoreError) {
        var folder = ""
        let parts = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        for (offset, part) in parts.enumerated() {
            folder += (offset == 0 ? "" : "/") + part
            guard !part.isEmpty, part != "." else { continue }
            if mkdir(folder, 0o755) != 0 && errno != EEXIST {
                throw .unusable(
                    "cannot create the folder \(folder) for the store \(path): \(Errno(errno))")
            }
        }
    }
}
