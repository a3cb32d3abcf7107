import Store
import TestSupport
import Testing

@testable import PostgresStore
@testable import SQLiteStore

/// Schema steps by name (docs/STORE.md, "Migrations"): what a store needs of them, the same steps
/// on both SQL stores, and stores that recorded steps this build does not know refused.
@Suite("Migrations")
struct MigrationTests {
    static let known = [Migration("a", "A"), Migration("b", "B"), Migration("c", "C")]

    @Test func aStoreNeedsTheStepsItHasNotApplied() {
        #expect(MigrationPlan(applied: [], version: 0, known: Self.known) == .apply(Self.known))
        #expect(MigrationPlan(applied: ["a"], version: 1, known: Self.known) == .apply(Array(Self.known[1...])))
        #expect(MigrationPlan(applied: ["a", "b", "c"], version: 3, known: Self.known) == .current)
    }

    /// A step appended on another branch and merged before one appended here is applied whatever
    /// its position: a store is matched by names, not by a count.
    @Test func aStepIsFoundByItsNameNotItsPosition() {
        #expect(MigrationPlan(applied: ["a", "c"], version: 2, known: Self.known) == .apply([Migration("b", "B")]))
    }

    @Test func aStoreWithStepsUnknownHereIsANewerBuilds() {
        #expect(MigrationPlan(applied: ["a", "z"], version: 2, known: Self.known) == .newer(unknown: ["z"]))
        #expect(MigrationPlan(applied: ["a", "b", "c"], version: 4, known: Self.known) == .newer(unknown: []))
    }

    /// Stores from before steps were named recorded a count: theirs are the first that many.
    @Test func aStoreFromBeforeNamesAppliedTheFirstStepsOfItsVersion() {
        #expect(MigrationPlan.applied(byVersion: 0, known: Self.known) == [])
        #expect(MigrationPlan.applied(byVersion: 2, known: Self.known) == ["a", "b"])
        #expect(MigrationPlan.applied(byVersion: 4, known: Self.known) == nil)
    }

    @Test func bothSQLStoresHaveTheSameStepsInTheSameOrder() {
        #expect(SQLiteStore.migrations.map(\.name) == PostgresStore.migrations.map(\.name))
        #expect(Set(SQLiteStore.migrations.map(\.name)).count == SQLiteStore.migrations.count, "each name once")
    }

    @Test func aSQLiteStoreRecordsEveryStepByName() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        _ = try SQLiteStore(path: path)
        #expect(try Self.sqliteSteps(path) == SQLiteStore.migrations.map(\.name))
    }

    @Test func aSQLiteStoreWithAStepUnknownHereIsRefusedNamingIt() throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        _ = try SQLiteStore(path: path)
        let count = SQLiteStore.migrations.count
        try SQLiteConnection(path: path).execute(
            "INSERT INTO schema_migrations (position, name) VALUES (\(count), 'from-the-future'); "
                + "PRAGMA user_version = \(count + 1)")
        #expect(
            throws: StoreError.unusable(
                "\(path) has schema version \(count + 1), newer than this banner-server's \(count) (steps unknown "
                    + "here: from-the-future): run a banner-server at least as new as the one that wrote it, or give "
                    + "another --store")
        ) { try SQLiteStore(path: path) }
    }

    @Test func aPostgreSQLStoreRecordsEveryStepByNameAndRefusesOneUnknownHere() async throws {
        let server = try await PostgresServer.shared()
        let uri = try await server.createDatabase()
        let database = PostgresServer.database(in: uri)
        try await offThePool { try PostgresStore(uri: uri) }.close()
        let steps = try await server.psql("SELECT name FROM banner_migrations ORDER BY position", database: database)
        #expect(steps.split(separator: "\n").map(String.init) == PostgresStore.migrations.map(\.name))
        let count = PostgresStore.migrations.count
        _ = try await server.psql(
            "INSERT INTO banner_migrations (position, name) VALUES (\(count), 'from-the-future'); "
                + "UPDATE banner_store SET value = '\(count + 1)' WHERE key = 'schema_version'",
            database: database)
        await #expect {
            try await offThePool { try PostgresStore(uri: uri) }
        } throws: { error in
            guard case .unusable(let detail) = error as? StoreError else { return false }
            return detail.contains("newer than this banner-server's \(count) (steps unknown here: from-the-future)")
        }
    }

    static func sqliteSteps(_ path: String) throws -> [String] {
        let statement = try SQLiteConnection(path: path).statement(
            "SELECT name FROM schema_migrations ORDER BY position")
        var names: [String] = []
        while try statement.step() { names.append(statement.text(0) ?? "") }
        return names
    }
}
