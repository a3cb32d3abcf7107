import CPostgres

/// A libpq call that failed: PostgreSQL's SQLSTATE (empty when the server never answered), its
/// message, and what was being done.
struct PostgresError: Error, CustomStringConvertible {
    let sqlState: String
    let message: String
    let during: String
    /// The connection is unusable after it (the server went away, the network broke): the next
    /// use must connect again.
    let brokeConnection: Bool

    var description: String {
        "\(during): \(message)" + (sqlState.isEmpty ? "" : " (SQLSTATE \(sqlState))")
    }

    /// Class 08 (connection exception), 57P (operator intervention: the server shutting down),
    /// 53 (insufficient resources): worth retrying later, nothing wrong with the request.
    var isTransient: Bool {
        brokeConnection || sqlState.hasPrefix("08") || sqlState.hasPrefix("57P") || sqlState.hasPrefix("53")
    }

    /// 40001 (serialization failure), 40P01 (deadlock): the transaction can be run again.
    var isRetryable: Bool { sqlState == "40001" || sqlState == "40P01" }
}
