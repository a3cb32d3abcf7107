import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: HistoryStore {
    public func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange {
        try contents.withLock { contents throws(StoreError) in
            guard let name = contents.name(of: change.carousel) else { throw .notFound(name: "#\(change.carousel)") }
            contents.lastPendingID += 1
            let stored = change.stored(as: contents.lastPendingID)
            contents.pending[stored.id] = stored
            contents.append([
                AuditEntry(
                    .scheduleChange, by: change.requester, at: change.createdAt, carousel: name,
                    target: String(stored.id))
            ])
            return stored
        }
    }

    public func pendingChanges() throws(StoreError) -> [PendingChange] {
        contents.withLock { $0.pending.values.sorted { ($0.at, $0.id) < ($1.at, $1.id) } }
    }

    public func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.pending[id]?.carousel == carousel, let cancelled = contents.pending.removeValue(forKey: id)
            else { return false }
            contents.append([
                AuditEntry(
                    .cancelChange, attribution, carousel: contents.name(of: cancelled.carousel), target: String(id))
            ])
            return true
        }
    }

    public func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        contents.withLock { Array($0.audit.reversed().lazy.filter(query.matches).prefix(query.limit)) }
    }

    public func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord] {
        contents.withLock { ($0.revisions[serial] ?? []).reversed().map(\.record) }
    }

    public func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        contents.withLock { $0.revisions[serial]?.first { $0.record.revision == revision } }
    }
}
