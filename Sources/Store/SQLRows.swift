import TimeZones

/// A row as the SQL stores read it back: its columns by position, as integers or texts. SQLite's
/// statements and PostgreSQL's rows both are one, so a record is decoded from its columns once,
/// in its own type (`TokenRecord(row:)`), whichever database it comes from.
public protocol SQLRow {
    func integer(_ column: Int) -> Int64?
    func text(_ column: Int) -> String?
}

extension SQLRow {
    /// An integer column of nanoseconds since the epoch.
    public func timestamp(_ column: Int) -> Timestamp? { integer(column).map(Timestamp.init(nanosecondsSinceEpoch:)) }
}

/// What differs between the SQL the two SQL stores send, where they send the same statement: how a
/// statement names its parameters. The rest of what differs is each backend's own (its types in
/// its migrations, PostgreSQL's row locks and notifications, SQLite's immediate transactions).
public struct SQLDialect: Sendable {
    /// The `n`th parameter (from 1): `?1` or `$1`.
    public let parameter: @Sendable (Int) -> String

    public static let sqlite = SQLDialect { "?\($0)" }
    public static let postgres = SQLDialect { "$\($0)" }
}
