import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: TokenStore {
    // MARK: Tokens

    /// The payload that tells replicas a token was created or deleted: no carousel's name starts
    /// with `*`.
    static let tokensPayload = "*tokens"

    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        var parameters: [String?] = [
            token.name, token.role.rawValue, token.storedCarousels,
            token.expiresAt.map { String($0.nanosecondsSinceEpoch) }, String(token.createdAt.nanosecondsSinceEpoch),
            token.createdBy, token.digest,
        ]
        let audited = Self.auditing(
            [AuditEntry(.createToken, attribution, target: token.name)], after: "saved", &parameters)
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                WITH saved AS (
                    INSERT INTO tokens (name, role, carousels, expires_at, created_at, created_by, digest)
                    VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (name) DO NOTHING RETURNING 1), \(audited)
                SELECT pg_notify('\(Self.channel)', '\(Self.tokensPayload)') FROM saved
                """, parameters)
        }
        return !rows.isEmpty
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(TokenRecord.selectAll)
        }
        return rows.map { TokenRecord(row: PostgresRow($0)) }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        var parameters: [String?] = [name]
        let audited = Self.auditing(
            [AuditEntry(.revokeToken, attribution, target: name)], after: "deleted", &parameters)
        let rows = try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                WITH deleted AS (DELETE FROM tokens WHERE name = $1 RETURNING 1), \(audited)
                SELECT pg_notify('\(Self.channel)', '\(Self.tokensPayload)') FROM deleted
                """, parameters)
        }
        return !rows.isEmpty
    }
}
