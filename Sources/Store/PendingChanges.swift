import TimeZones

/// A change of a carousel's definition asked for now and made at `at` (docs/SCHEDULED.md): the
/// admin request as it came — method, path, body, If-Match — kept in the store until then, when
/// it is made as if it came at `at` (checked again then: If-Match against the revision of the
/// moment). Every process sharing the store knows it; the one that makes it claims it in the
/// write's transaction, so it is made once.
public struct PendingChange: Sendable, Hashable {
    /// Given by the store; never given twice in one store.
    public let id: Int64
    /// The carousel's serial.
    public let carousel: Int64
    public let at: Timestamp
    /// `PATCH`, `PUT`, `POST`, `DELETE`.
    public let method: String
    /// The request's path without its query: `/carousels/lobby/banners/sale`.
    public let path: String
    /// The request's body as sent (UTF-8 JSON text; empty for a deletion).
    public let body: String
    /// The request's If-Match, checked at `at`.
    public let ifMatch: String?
    /// Who asked, and in which request: the change is theirs when it is made.
    public let requester: Requester
    public let createdAt: Timestamp

    public init(
        id: Int64 = 0, carousel: Int64, at: Timestamp, method: String, path: String, body: String, ifMatch: String?,
        requester: Requester, createdAt: Timestamp
    ) {
        self.id = id
        self.carousel = carousel
        self.at = at
        self.method = method
        self.path = path
        self.body = body
        self.ifMatch = ifMatch
        self.requester = requester
        self.createdAt = createdAt
    }

    /// The same change as stored under `id`.
    public func stored(as id: Int64) -> PendingChange {
        PendingChange(
            id: id, carousel: carousel, at: at, method: method, path: path, body: body, ifMatch: ifMatch,
            requester: requester, createdAt: createdAt)
    }

    /// The columns a SQL store keeps it in, in this order.
    public static let columns = "id, carousel, at, method, path, body, if_match, actor, request_id, created_at"

    /// Every pending change, by `at`, then id: the statement both SQL stores send.
    public static let selectAll = "SELECT \(columns) FROM pending ORDER BY at, id"

    /// A row of `columns` as read.
    public init(row: some SQLRow) {
        self.init(
            id: row.integer(0) ?? 0, carousel: row.integer(1) ?? 0,
            at: Timestamp(nanosecondsSinceEpoch: row.integer(2) ?? 0), method: row.text(3) ?? "",
            path: row.text(4) ?? "", body: row.text(5) ?? "", ifMatch: row.text(6),
            requester: Requester(actor: row.text(7) ?? "", requestID: row.text(8)),
            createdAt: Timestamp(nanosecondsSinceEpoch: row.integer(9) ?? 0))
    }
}
