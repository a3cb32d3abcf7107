import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: TokenStore {
    // MARK: Tokens

    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                guard try Self.insert(token, into: connection) else { return false }
                try Self.append([AuditEntry(.createToken, attribution, target: token.name)], in: connection)
                return true
            }
        }
    }

    /// False when the name is taken.
    static func insert(_ token: TokenRecord, into connection: SQLiteConnection) throws(SQLiteError) -> Bool {
        let insert = try connection.statement(
            """
            INSERT INTO tokens (name, role, carousels, expires_at, created_at, created_by, digest)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (name) DO NOTHING RETURNING 1
            """
        ).bind(
            .text(token.name), .text(token.role.rawValue), token.storedCarousels.map { .text($0) },
            token.expiresAt.map { .integer($0.nanosecondsSinceEpoch) },
            .integer(token.createdAt.nanosecondsSinceEpoch), .text(token.createdBy), .text(token.digest))
        defer { insert.reset() }
        return try insert.step()
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let statement = try connection.statement(TokenRecord.selectAll)
            defer { statement.reset() }
            var tokens: [TokenRecord] = []
            while try statement.step() { tokens.append(TokenRecord(row: statement)) }
            return tokens
        }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        try on(admin) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) -> Bool in
                try connection.statement("DELETE FROM tokens WHERE name = ?1").bind(.text(name)).run()
                guard connection.changes > 0 else { return false }
                try Self.append([AuditEntry(.revokeToken, attribution, target: name)], in: connection)
                return true
            }
        }
    }
}
