import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore {
    // MARK: Connections

    /// Runs `body` on the connection of `slot`, alone on it, connecting first when it has none
    /// (or a broken one); PostgreSQL's errors become what an operator reads.
    func on<Result>(
        _ slot: Lock<Slot>, _ body: (PostgresConnection) throws(PostgresError) -> Result
    ) throws(StoreError) -> Result {
        try slot.withLock { slot throws(StoreError) in
            let connection = try connected(&slot)
            do throws(PostgresError) {
                return try body(connection)
            } catch {
                if !connection.isOpen { slot.connection = nil }
                throw failure(error)
            }
        }
    }

    func connected(_ slot: inout Slot) throws(StoreError) -> PostgresConnection {
        if let connection = slot.connection, connection.isOpen { return connection }
        slot.connection = nil
        let now = ContinuousClock.now
        if let last = slot.lastAttempt, now - last < Self.retryPause, let failure = slot.lastFailure {
            throw failure  // tried a moment ago: fail fast rather than wait again
        }
        slot.lastAttempt = now
        do {
            let connection = try PostgresConnection(parameters)
            let identity = try Self.migrate(connection, describe: description)
            status.withLock { $0.identity = identity }
            slot.connection = connection
            slot.lastFailure = nil
            return connection
        } catch {
            let failure: StoreError =
                switch error {
                case let error as PostgresError: self.failure(error)
                case let error as StoreError: error
                default: .unavailable("\(description): \(error)")
                }
            slot.lastFailure = failure
            throw failure
        }
    }

    /// What an operator reads for a failed call.
    func failure(_ error: PostgresError) -> StoreError {
        guard error.isTransient else { return .unavailable("\(description) failed: \(error)") }
        return .unavailable(
            "\(description) cannot be reached (\(error.message)); banner-server keeps trying: "
                + "check that the server is up and reachable")
    }

    static func transaction<Result>(
        _ connection: PostgresConnection, _ body: () throws(PostgresError) -> Result
    ) throws(PostgresError) -> Result {
        try connection.run("BEGIN")
        do {
            let result = try body()
            try connection.run("COMMIT")
            return result
        } catch {
            if connection.isOpen { _ = try? connection.run("ROLLBACK") }
            throw error
        }
    }

    /// `uri` without its password, for logs and messages: `postgres://user@host:port/db`.
    public static func redacted(_ uri: String) -> String {
        (try? parse(uri)) ?? "postgres://… (a malformed URI)"
    }

    /// `postgres://user@host:port/db` from a URI, the password left out; `.unusable` when libpq
    /// cannot be loaded or cannot parse it.
    static func parse(_ uri: String) throws(StoreError) -> String {
        // libpq is opened here, with the first PostgreSQL URI (CPostgres/shim.h).
        if let failure = cpq_start() {
            throw .unusable(
                "libpq cannot be loaded (\(String(cString: failure))); install libpq5 to use a PostgreSQL store")
        }
        var error: UnsafeMutablePointer<CChar>?
        guard let options = cpq_conninfoParse(uri, &error) else {
            let message = error.map { String(cString: $0).split(whereSeparator: \.isNewline).joined(separator: " ") }
            error.map { cpq_freemem($0) }
            throw .unusable(
                "the PostgreSQL URI is malformed (\(message ?? "out of memory")); "
                    + "give --store postgres://USER:PASSWORD@HOST:PORT/DATABASE")
        }
        defer { cpq_conninfoFree(options) }
        var found: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { found[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let user = found["user"].map { "\($0)@" } ?? ""
        let host = found["host"] ?? found["hostaddr"] ?? "localhost"
        let port = found["port"].map { ":\($0)" } ?? ""
        return "postgres://\(user)\(host)\(port)/\(found["dbname"] ?? "")"
    }
}
