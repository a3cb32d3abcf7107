import Carousel
import Definitions
import Metrics
import Store
import TimeZones

/// The service's store, each operation timed for `GET /metrics` (`ServiceMetrics`): every call
/// the service makes goes through here, so none is left out.
/// It also rings `queued` after each write that may have queued webhook deliveries (docs/WEBHOOKS.md).
final class TimedStore: CarouselStore {
    private let store: any CarouselStore
    private let metrics: ServiceMetrics
    private let queued: Doorbell

    init(_ store: any CarouselStore, metrics: ServiceMetrics, queued: Doorbell) {
        self.store = store
        self.metrics = metrics
        self.queued = queued
    }

    var description: String { store.description }
    var identity: String { store.identity }
    var isReadOnly: Bool { store.isReadOnly }
    var isShared: Bool { store.isShared }
    var unreachable: String? { store.unreachable }

    func loadAll() throws(StoreError) -> [StoredCarousel] {
        try metrics.timing(.load) { () throws(StoreError) in try store.loadAll() }
    }

    func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel
    {
        defer { queued.ring() }
        return try metrics.timing(.create) { () throws(StoreError) in
            try store.create(definition, anchor: anchor, by: attribution)
        }
    }

    func load(named name: String) throws(StoreError) -> StoredCarousel? {
        try metrics.timing(.load) { () throws(StoreError) in try store.load(named: name) }
    }

    func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        var tells = false
        defer { if tells { queued.ring() } }
        return try metrics.timing(purpose.isAdmin ? .admin : .command) { () throws(StoreError) in
            try store.modify(key, purpose, expecting: expected) { stored in
                let write = decide(stored)
                tells = write?.tellsWebhooks ?? false
                return write
            }
        }
    }

    func delete(_ key: CarouselKey, expectedRevision: UInt64, by attribution: Attribution) throws(StoreError) {
        defer { queued.ring() }
        try metrics.timing(.delete) { () throws(StoreError) in
            try store.delete(key, expectedRevision: expectedRevision, by: attribution)
        }
    }

    func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void) {
        store.observeChanges(onChange)
    }

    func close() { store.close() }

    func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool {
        try metrics.timing(.create) { () throws(StoreError) in
            try store.seed(definitions, anchor: anchor, by: attribution)
        }
    }

    func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord] {
        try metrics.timing(.load) { () throws(StoreError) in try store.revisions(of: serial) }
    }

    func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        try metrics.timing(.load) { () throws(StoreError) in try store.revision(revision, of: serial) }
    }

    func record(_ batch: StatsBatch) throws(StoreError) {
        try metrics.timing(.record) { () throws(StoreError) in try store.record(batch) }
    }

    func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try metrics.timing(.stats) { () throws(StoreError) in
            try store.stats(of: serial, audience: audience, from: from, to: to)
        }
    }

    func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try metrics.timing(.stats) { () throws(StoreError) in try store.lastPlay(of: serial, audience: audience) }
    }

    func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        try metrics.timing(.screens) { () throws(StoreError) in try store.saveScreens(sightings, timeout: timeout) }
    }

    func keepScreens(_ rows: [ScreenRecord]) throws(StoreError) {
        try metrics.timing(.screens) { () throws(StoreError) in try store.keepScreens(rows) }
    }

    func screens() throws(StoreError) -> [ScreenRecord] {
        try metrics.timing(.screens) { () throws(StoreError) in try store.screens() }
    }

    func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try metrics.timing(.screens) { () throws(StoreError) in try store.forgetScreens(silentSince: cutoff) }
    }

    func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError) {
        try metrics.timing(.screens) { () throws(StoreError) in try store.forgetScreens(keys, audit: audit) }
    }

    func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        try metrics.timing(.media) { () throws(StoreError) in try store.saveMedia(media, by: attribution) }
    }

    func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] {
        try metrics.timing(.media) { () throws(StoreError) in try store.mediaRecords(id: id) }
    }

    func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        try metrics.timing(.media) { () throws(StoreError) in try store.mediaBytes(of: id, file) }
    }

    func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        try metrics.timing(.media) { () throws(StoreError) in try store.deleteMedia(id, by: attribution) }
    }

    func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        try metrics.timing(.admin) { () throws(StoreError) in try store.saveToken(token, by: attribution) }
    }

    func tokens() throws(StoreError) -> [TokenRecord] {
        try metrics.timing(.load) { () throws(StoreError) in try store.tokens() }
    }

    func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        try metrics.timing(.admin) { () throws(StoreError) in try store.deleteToken(named: name, by: attribution) }
    }

    func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange {
        try metrics.timing(.admin) { () throws(StoreError) in try store.schedule(change) }
    }

    func pendingChanges() throws(StoreError) -> [PendingChange] {
        try metrics.timing(.load) { () throws(StoreError) in try store.pendingChanges() }
    }

    func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        try metrics.timing(.admin) { () throws(StoreError) in
            try store.saveWebhook(webhook, by: attribution, keepingAtMost: limit)
        }
    }

    func webhooks() throws(StoreError) -> [WebhookRecord] {
        try metrics.timing(.load) { () throws(StoreError) in try store.webhooks() }
    }

    func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try metrics.timing(.admin) { () throws(StoreError) in try store.deleteWebhook(id, by: attribution) }
    }

    func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try metrics.timing(.admin) { () throws(StoreError) in try store.cancelPending(id, of: carousel, by: attribution)
        }
    }

    func queue(_ events: [QueuedEvent]) throws(StoreError) {
        defer { queued.ring() }
        try metrics.timing(.deliveries) { () throws(StoreError) in try store.queue(events) }
    }

    func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError) -> [DueDelivery] {
        try metrics.timing(.deliveries) { () throws(StoreError) in
            try store.claimDeliveries(dueAt: now, until: until, limit: limit)
        }
    }

    func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        try metrics.timing(.deliveries) { () throws(StoreError) in
            try store.finishDelivery(number, attempt, retryAt: retryAt)
        }
    }

    func nextDeliveryDue() throws(StoreError) -> Timestamp? {
        try metrics.timing(.deliveries) { () throws(StoreError) in try store.nextDeliveryDue() }
    }

    func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        try metrics.timing(.deliveries) { () throws(StoreError) in try store.deliveries(of: webhook, limit: limit) }
    }

    func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        try metrics.timing(.deliveries) { () throws(StoreError) in try store.forgetDeliveries(doneBefore: cutoff) }
    }

    func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] {
        try metrics.timing(.load) { () throws(StoreError) in try store.auditLog(query) }
    }

    func importDefinitions(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) {
        defer { queued.ring() }
        try metrics.timing(.create) { () throws(StoreError) in
            try store.importDefinitions(definitions, anchor: anchor, by: attribution)
        }
    }
}
