import TimeZones

/// What a named token may do (docs/TOKENS.md).
public enum TokenRole: String, Sendable, CaseIterable {
    /// Every admin request, and commands.
    case admin
    /// Commands: moves, pause, resume, jump.
    case control
    /// Reading stats.
    case stats
}

/// A named token as a store keeps it: never its secret, only the secret's SHA-256.
public struct TokenRecord: Sendable, Hashable {
    /// Unique; what the history and the audit log name as the actor.
    public let name: String
    public let role: TokenRole
    /// The carousels it may act on; nil for all (and for the routes that are no carousel's).
    public let carousels: [String]?
    /// Refused from this instant on; nil: never.
    public let expiresAt: Timestamp?
    public let createdAt: Timestamp
    /// The actor that created it.
    public let createdBy: String
    /// The SHA-256 of the secret, in lower-case hexadecimal.
    public let digest: String

    public init(
        name: String, role: TokenRole, carousels: [String]?, expiresAt: Timestamp?, createdAt: Timestamp,
        createdBy: String, digest: String
    ) {
        self.name = name
        self.role = role
        self.carousels = carousels
        self.expiresAt = expiresAt
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.digest = digest
    }

    /// Its carousels as a store keeps them: names joined by spaces (a name has none), or nil.
    public var storedCarousels: String? { carousels?.joined(separator: " ") }

    /// `storedCarousels` read back.
    public static func carousels(stored text: String?) -> [String]? {
        text.map { $0.split(separator: " ").map(String.init) }
    }
}

/// Named tokens (docs/TOKENS.md).
public protocol TokenStore: AnyObject, Sendable {
    /// Named tokens (docs/TOKENS.md): stores `token`, durable (synced) before it returns, and tells
    /// the other processes sharing the store (`StoreChange.tokens`). False when its name is taken
    /// (then nothing changes). The audit log keeps the creation (its name, never a secret), by
    /// `attribution`.
    func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool

    /// Every named token, by name.
    func tokens() throws(StoreError) -> [TokenRecord]

    /// Deletes the token named `name` and tells the other processes; false when there is none.
    /// The audit log keeps a deletion, by `attribution`.
    func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool
}

extension TokenRecord {
    /// The columns a SQL store keeps a token in, in the order `init(row:)` reads them.
    public static let columns = "name, role, carousels, expires_at, created_at, created_by, digest"
    /// Every token, by name: the statement both SQL stores send.
    public static let selectAll = "SELECT \(columns) FROM tokens ORDER BY name"

    /// A row of `columns` as read.
    public init(row: some SQLRow) {
        self.init(
            name: row.text(0) ?? "", role: TokenRole(rawValue: row.text(1) ?? "") ?? .stats,
            carousels: TokenRecord.carousels(stored: row.text(2)), expiresAt: row.timestamp(3),
            createdAt: row.timestamp(4) ?? Timestamp(nanosecondsSinceEpoch: 0), createdBy: row.text(5) ?? "",
            digest: row.text(6) ?? "")
    }
}
