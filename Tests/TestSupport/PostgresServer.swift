import Foundation
import Threading

/// A throwaway PostgreSQL server for tests (Debian's `postgresql`): `initdb` into a fresh
/// temporary directory, started on a free loopback port with its socket in that directory,
/// trusting local connections; stopped and deleted with this object. PostgreSQL refuses to run
/// as root, so when the tests do, the server runs as the `postgres` user the package creates.
///
/// The server outlives no test process, however it ends: a shell started with it waits on a pipe
/// whose other end only this process holds, and stops the server when the pipe closes.
///
/// Each test that stops its server launches one of its own; the others share `shared()`, a
/// database each. Every call runs its programs off the pool of Swift's tasks (`offThePool`): that
/// pool has a thread per core, and a test blocking one for the seconds initdb takes (more under a
/// sanitizer) starves every other test running beside it.
public final class PostgresServer: Sendable {
    public let port: Int
    public let directory: URL
    private let databases = Lock(0)
    /// The shell that started the running server and stops it when the pipe to it closes.
    private let watcher = Lock<Watcher?>(nil)

    /// A server of the tests' process, started on first use, for tests that do not stop it.
    public static func shared() async throws -> PostgresServer {
        try TestTier.needs("a PostgreSQL server")
        return try await offThePool { try sharedServer.get() }
    }

    private static let sharedServer: Result<PostgresServer, any Error> = Result { try PostgresServer() }

    /// A server of the caller's own.
    public static func launch() async throws -> PostgresServer {
        try await offThePool { try PostgresServer() }
    }

    private init() throws {
        directory = try temporaryDirectory()
        port = try freeLoopbackPort()
        try Self.giveToServerUser(directory)
        try run(Self.binary("initdb"), "-D", data, "-U", "banner", "--auth=trust", "--no-sync", "-E", "UTF8")
        try? FileManager.default.removeItem(atPath: directory.appendingPathComponent("server.log").path)
        try startNow()
    }

    deinit {
        // Ending the watcher stops the server (it sends SIGINT); the folder goes once
        // it has, on a thread of its own rather than whichever thread let go of this object.
        let (directory, watcher) = (directory, watcher.withLock { $0.take() })
        offThePoolLater {
            watcher?.end()
            try? FileManager.default.removeItem(at: directory)
        }
    }

    private var data: String { directory.appendingPathComponent("data").path }

    /// The URI of `database` on this server. Without GSS encryption, which this server does not
    /// offer: libpq would first ask Kerberos, whose library aborts the process (k5_mutex_lock)
    /// when it exits while a store is still connecting, after the last test.
    public func uri(database: String = "postgres") -> String {
        "postgres://banner@127.0.0.1:\(port)/\(database)?gssencmode=disable"
    }

    /// The database a URI of `uri(database:)` names.
    public static func database(in uri: String) -> String {
        String(uri.split(separator: "?")[0].split(separator: "/").last ?? "")
    }

    /// A new, empty database; its URI.
    public func createDatabase() async throws -> String {
        try await offThePool { try self.createDatabaseNow() }
    }

    private func createDatabaseNow() throws -> String {
        let number = databases.withLock { count in
            count += 1
            return count
        }
        let name = "test_\(number)"
        try run(
            Self.binary("psql"), "-h", directory.path, "-p", "\(port)", "-U", "banner", "-d", "postgres",
            "-v", "ON_ERROR_STOP=1", "-q", "-c", "CREATE DATABASE \(name)")
        return uri(database: name)
    }

    /// Runs SQL on `database` with psql; its output (unaligned, tuples only).
    @discardableResult
    public func psql(_ sql: String, database: String) async throws -> String {
        try await offThePool { try self.psqlNow(sql, database: database) }
    }

    private func psqlNow(_ sql: String, database: String) throws -> String {
        try run(
            Self.binary("psql"), "-h", directory.path, "-p", "\(port)", "-U", "banner", "-d", database,
            "-v", "ON_ERROR_STOP=1", "-q", "-A", "-t", "-c", sql)
    }

    /// Starts the server again and waits until it accepts connections.
    public func start() async throws {
        try await offThePool { try self.startNow() }
    }

    private func startNow() throws {
        let server =
            Self.asUser + [
                try Self.binary("postgres"), "-D", data, "-p", "\(port)", "-k", directory.path,
                "-c", "listen_addresses=127.0.0.1",
                // Every test process's servers share it, each with three connections per store.
                "-c", "max_connections=500",
            ]
        let log = shellQuoted(directory.appendingPathComponent("server.log").path)
        // SIGINT is PostgreSQL's fast shutdown: clients disconnected, committed work kept.
        let shell =
            server.map(shellQuoted).joined(separator: " ")
            + " >> \(log) 2>&1 & server=$!; read line; kill -INT $server 2>/dev/null"
        guard let started = Watcher(shell) else { throw PostgresServerError("cannot start /bin/sh for PostgreSQL") }
        watcher.withLock { $0 = started }
        let deadline = ContinuousClock.now + .seconds(60)
        let isReady =
            Self.asUser.map(shellQuoted)
            + [try Self.binary("pg_isready"), "-q", "-h", directory.path, "-p", "\(port)"].map(shellQuoted)
        while runShell(isReady.joined(separator: " ") + " > /dev/null 2>&1 < /dev/null") != 0 {
            guard ContinuousClock.now < deadline else {
                throw PostgresServerError("PostgreSQL did not accept connections within 60 s:\n\(self.log)")
            }
            usleep(50_000)  // polling a condition, with a deadline
        }
    }

    /// Stops the server (fast shutdown) and waits until it has; its watcher too (a child left
    /// unreaped would make Swift Testing's process monitor spin).
    public func stop() async throws {
        try await offThePool { try self.stopNow() }
    }

    private func stopNow() throws {
        try run(Self.binary("pg_ctl"), "stop", "-w", "-t", "60", "-m", "fast", "-D", data)
        watcher.withLock { $0.take() }?.end()
    }

    /// The server's log so far, for failure messages.
    public var log: String {
        textOfFile(atPath: directory.appendingPathComponent("server.log").path) ?? ""
    }

    // MARK: Running PostgreSQL's programs

    /// A program of the newest PostgreSQL installed (`/usr/lib/postgresql/15/bin/initdb`).
    private static func binary(_ name: String) throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        guard let newest = versions.compactMap(Int.init).max() else {
            throw PostgresServerError("no PostgreSQL under \(root): install Debian's postgresql (make test does)")
        }
        return "\(root)/\(newest)/bin/\(name)"
    }

    private static var asRoot: Bool { getuid() == 0 }

    /// The command prefix that runs a program as `postgres` when we are root.
    private static var asUser: [String] {
        asRoot ? ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] : []
    }

    private static func giveToServerUser(_ directory: URL) throws {
        guard asRoot else { return }
        guard let user = getpwnam("postgres") else {
            throw PostgresServerError("no 'postgres' user to run PostgreSQL as: install Debian's postgresql")
        }
        guard chown(directory.path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw PostgresServerError("chown \(directory.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Runs a program to its end (as `postgres` when we are root); its output, or an error with it.
    @discardableResult
    private func run(_ arguments: String...) throws -> String {
        let command = Self.asUser + arguments
        let log = directory.appendingPathComponent("command-\(UUID().uuidString).out").path
        // From the server's own folder: the `postgres` user may not enter the test's working
        // directory (a clone under a 0700 `mktemp -d`), and psql says so in the output kept.
        let shell =
            "cd \(shellQuoted(directory.path)) && " + command.map(shellQuoted).joined(separator: " ")
            + " > \(shellQuoted(log)) 2>&1 < /dev/null"
        let status = runShell(shell)
        let output = textOfFile(atPath: log) ?? ""
        try? FileManager.default.removeItem(atPath: log)
        guard status == 0 else {
            throw PostgresServerError("\(arguments.joined(separator: " ")) exited with \(status): \(output)")
        }
        return output
    }
}

public struct PostgresServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// A loopback port nothing listens on now, below Linux's ephemeral range (32768 and up): a client
/// that keeps retrying a server that is down (a replica waiting for PostgreSQL) is in time given
/// that very port as its own and connects to itself, and the server cannot listen on it again.
public func freeLoopbackPort() throws -> Int {
    for _ in 0..<500 {
        let candidate = Int.random(in: 20_000..<32_768)
        if isFree(candidate) { return candidate }
    }
    throw PostgresServerError("no free port below 32768: \(String(cString: strerror(errno)))")
}

private func isFree(_ port: Int) -> Bool {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(descriptor) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(descriptor, pointer, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}
