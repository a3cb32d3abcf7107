import TimeZones

/// What the store remembers of writes: each carousel's revisions (docs/HISTORY.md), the changes
/// scheduled for later (docs/SCHEDULED.md) and the audit log (docs/AUDIT.md).
public protocol HistoryStore: AnyObject, Sendable {
    /// Carousel `serial`'s history as kept, newest first.
    func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord]

    /// Revision `revision` of carousel `serial`, with its definition; nil when it is not kept.
    func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision?

    /// Scheduled changes (docs/SCHEDULED.md): keeps `change` (the id given is ignored: the answer
    /// has the store's), durable before it returns, with its audit entry (`change.schedule` by its
    /// requester), and tells the other processes sharing the store (`StoreChange.pending`). Throws
    /// `.notFound` when its carousel is no longer stored.
    func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange

    /// Every pending change, by `at`, then id.
    func pendingChanges() throws(StoreError) -> [PendingChange]

    /// Deletes pending change `id` of carousel `carousel` (a serial) with its audit entry
    /// (`change.cancel` by `attribution`) and tells the other processes; false when it is not one
    /// of its pending changes (made, cancelled, another carousel's, never was).
    func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool

    /// The audit log's entries `query` asks for, newest first (docs/AUDIT.md).
    func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord]
}
