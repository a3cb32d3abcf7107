import Carousel
import Definitions
import Locking
import TimeZones

/// Carousels in this process's memory: nothing survives it. For tests and benchmarks
/// (`--store memory`).
public final class MemoryStore: CarouselStore {
    private struct Contents {
        var carousels: [String: StoredCarousel] = [:]
        var lastSerial: Int64 = 0
        var plays: [PlayRecord.Key: PlayRecord] = [:]
        var engagement: [EngagementCount.Key: EngagementCount] = [:]
        /// The ids of views reported, and when (docs/STATS.md).
        var viewReports: [IdentifiedView.Key: Timestamp] = [:]
        var screens: [ScreenRecord.Key: ScreenRecord] = [:]
        var media: [String: (record: MediaRecord, files: [MediaFile: [UInt8]])] = [:]
        /// Each carousel's history, oldest first.
        var revisions: [Int64: [Revision]] = [:]
        var tokens: [String: TokenRecord] = [:]
        /// The audit log, oldest first.
        var audit: [AuditRecord] = []
        var pending: [Int64: PendingChange] = [:]
        var lastPendingID: Int64 = 0
        var webhooks: [Int64: WebhookRecord] = [:]
        var lastWebhookID: Int64 = 0
        var deliveries: [Int64: Delivery] = [:]
        var lastDelivery: Int64 = 0

        /// The name of the carousel of serial `serial`, if one is stored.
        func name(of serial: Int64) -> String? {
            carousels.values.first { $0.serial == serial }?.name
        }

        /// Appends `entries` to the audit log and queues what they tell webhooks (`published`: the
        /// write makes a scheduled change).
        mutating func append(_ entries: [AuditEntry], published: Bool = false) {
            queue(QueuedEvent.told(by: entries, published: published))
            #if NO_AUDIT_LOG
                let entries: [AuditEntry] = []  // `make bench`'s second build (docs/PERFORMANCE.md)
            #endif
            for entry in entries { audit.append(AuditRecord(seq: (audit.last?.seq ?? 0) + 1, entry: entry)) }
        }

        /// One delivery per webhook that asked for each event's type, unless queued already.
        mutating func queue(_ events: [QueuedEvent]) {
            for event in events {
                for webhook in webhooks.values where webhook.events.contains(event.type) {
                    guard !deliveries.values.contains(where: { $0.webhook == webhook.id && $0.event.id == event.id })
                    else { continue }
                    lastDelivery += 1
                    deliveries[lastDelivery] = Delivery(webhook: webhook.id, event: event, nextAttemptAt: event.at)
                }
            }
        }

        /// Keeps `revision` of carousel `serial`, pruning what `RevisionRetention` lets go.
        mutating func keep(_ revision: Revision, of serial: Int64) {
            revisions[serial, default: []].append(revision)
            guard let (through, before) = RevisionRetention.pruning(after: revision.record) else { return }
            revisions[serial]?.removeAll { $0.record.revision <= through && $0.record.at < before }
        }

        /// A new carousel, at revision 1, kept in its history and in the audit log as `action`.
        mutating func insert(
            _ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution,
            as action: AuditAction
        ) -> StoredCarousel {
            lastSerial += 1
            let stored = StoredCarousel(definition: definition, revision: 1, anchor: anchor, serial: lastSerial)
            carousels[definition.name] = stored
            keep(Revision(of: definition, over: nil, attribution), of: stored.serial)
            append([AuditEntry(action, attribution, carousel: definition.name, revision: 1)])
            return stored
        }

        /// Throws `.missingMedia` unless every image of `ids` is stored.
        func findImages(_ ids: [String]) throws(StoreError) {
            let missing = ids.filter { media[$0] == nil }
            guard missing.isEmpty else { throw .missingMedia(missing) }
        }
    }

    private let contents = Lock(Contents())
    public let identity: String
    public var description: String { "memory store" }
    public var isReadOnly: Bool { false }

    public init() {
        identity = "m" + String(UInt32.random(in: .min ... .max), radix: 36)
    }

    public func loadAll() throws(StoreError) -> [StoredCarousel] {
        contents.withLock { $0.carousels.values.sorted { $0.name < $1.name } }
    }

    public func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel
    {
        try contents.withLock { contents throws(StoreError) in
            guard contents.carousels[definition.name] == nil else { throw .duplicate(name: definition.name) }
            try contents.findImages(definition.libraryImages(broughtInOver: nil))
            return contents.insert(definition, anchor: anchor, by: attribution, as: .createCarousel)
        }
    }

    public func load(named name: String) throws(StoreError) -> StoredCarousel? {
        contents.withLock { $0.carousels[name] }
    }

    /// One process owns it: what is stored is read in the transaction anyway, `expected` not needed.
    public func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        try contents.withLock { contents throws(StoreError) in
            guard let stored = contents.carousels[key.name], stored.serial == key.serial else {
                throw .notFound(name: key.name)
            }
            guard let write = decide(stored) else { return stored }
            let changed = write.carousel
            precondition(changed.key == key, "a change cannot rename a carousel or give it another serial")
            if purpose.isAdmin {
                try contents.findImages(changed.definition.libraryImages(broughtInOver: stored.definition))
            }
            if let id = write.applying {
                guard contents.pending[id]?.carousel == key.serial else { throw .notPending(id: id) }
                contents.pending[id] = nil
            }
            contents.carousels[key.name] = changed
            if let revision = purpose.revision(of: changed, over: stored) { contents.keep(revision, of: key.serial) }
            contents.append(write.audit, published: write.applying != nil)
            return changed
        }
    }

    public func delete(_ key: CarouselKey, expectedRevision: UInt64, by attribution: Attribution)
        throws(StoreError)
    {
        try contents.withLock { contents throws(StoreError) in
            guard let stored = contents.carousels[key.name], stored.serial == key.serial else {
                throw .notFound(name: key.name)
            }
            guard stored.revision == expectedRevision else {
                throw .conflict(name: key.name, revision: stored.revision)
            }
            contents.carousels[key.name] = nil
            contents.revisions[key.serial] = nil
            contents.screens = contents.screens.filter { $0.key.carousel != key.serial }
            contents.pending = contents.pending.filter { $0.value.carousel != key.serial }
            contents.append([
                AuditEntry(.deleteCarousel, attribution, carousel: key.name, revision: expectedRevision)
            ])
        }
    }

    public func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.carousels.isEmpty else { return false }
            for definition in definitions {
                _ = contents.insert(definition, anchor: anchor(definition), by: attribution, as: .seedCarousel)
            }
            return true
        }
    }

    public func importDefinitions(
        _ definitions: [CarouselDefinition],
        anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor, by attribution: Attribution
    ) throws(StoreError) {
        contents.withLock { contents in
            for definition in definitions {
                guard let existing = contents.carousels[definition.name] else {
                    _ = contents.insert(
                        definition, anchor: anchor(definition, nil), by: attribution, as: .importCarousel)
                    continue
                }
                let replaced = StoredCarousel(
                    definition: definition, revision: existing.revision + 1, anchor: anchor(definition, existing),
                    serial: existing.serial)
                contents.carousels[definition.name] = replaced
                contents.keep(
                    Revision(replaced.revision, of: definition, over: existing.definition, attribution),
                    of: existing.serial)
                contents.append([
                    AuditEntry(.importCarousel, attribution, carousel: definition.name, revision: replaced.revision)
                ])
            }
        }
    }

    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.tokens[token.name] == nil else { return false }
            contents.tokens[token.name] = token
            contents.append([AuditEntry(.createToken, attribution, target: token.name)])
            return true
        }
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        contents.withLock { $0.tokens.values.sorted { $0.name < $1.name } }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.tokens.removeValue(forKey: name) != nil else { return false }
            contents.append([AuditEntry(.revokeToken, attribution, target: name)])
            return true
        }
    }

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

    public func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        contents.withLock { contents in
            guard contents.webhooks.count < limit else { return nil }
            contents.lastWebhookID += 1
            let stored = webhook.stored(as: contents.lastWebhookID)
            contents.webhooks[stored.id] = stored
            contents.append([AuditEntry(.createWebhook, attribution, target: stored.auditTarget)])
            return stored
        }
    }

    public func webhooks() throws(StoreError) -> [WebhookRecord] {
        contents.withLock { $0.webhooks.values.sorted { $0.id < $1.id } }
    }

    public func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard let deleted = contents.webhooks.removeValue(forKey: id) else { return false }
            contents.deliveries = contents.deliveries.filter { $0.value.webhook != id }
            contents.append([AuditEntry(.deleteWebhook, attribution, target: deleted.auditTarget)])
            return true
        }
    }

    // MARK: Webhook deliveries

    /// A queued delivery (`DeliveryRecord`'s fields, and the claim).
    private struct Delivery {
        let webhook: Int64
        let event: QueuedEvent
        var attempts = 0
        var nextAttemptAt: Timestamp?
        var claimedUntil: Timestamp?
        var lastAttempt: DeliveryAttempt?
        var deliveredAt: Timestamp?

        func record(_ number: Int64) -> DeliveryRecord {
            DeliveryRecord(
                number: number, event: event.id, type: event.type.rawValue, createdAt: event.at, attempts: attempts,
                nextAttemptAt: nextAttemptAt, deliveredAt: deliveredAt, lastAttempt: lastAttempt)
        }
    }

    public func queue(_ events: [QueuedEvent]) throws(StoreError) {
        contents.withLock { $0.queue(events) }
    }

    public func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError)
        -> [DueDelivery]
    {
        contents.withLock { contents in
            let due = contents.deliveries.filter { _, delivery in
                delivery.nextAttemptAt.map { $0 <= now } ?? false && delivery.claimedUntil.map { $0 <= now } ?? true
            }.sorted { ($0.value.nextAttemptAt!, $0.key) < ($1.value.nextAttemptAt!, $1.key) }.prefix(limit)
            return due.compactMap { number, delivery in
                guard let webhook = contents.webhooks[delivery.webhook] else { return nil }
                contents.deliveries[number]?.claimedUntil = until
                return DueDelivery(
                    number: number, webhook: webhook.id, event: delivery.event.id, type: delivery.event.type.rawValue,
                    body: delivery.event.body, createdAt: delivery.event.at, attempts: delivery.attempts,
                    url: webhook.url, secret: webhook.secret)
            }
        }
    }

    public func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        contents.withLock { contents in
            guard var delivery = contents.deliveries[number] else { return }
            delivery.attempts += 1
            delivery.lastAttempt = attempt
            delivery.deliveredAt = attempt.delivered ? attempt.at : nil
            delivery.nextAttemptAt = attempt.delivered ? nil : retryAt
            delivery.claimedUntil = nil
            contents.deliveries[number] = delivery
        }
    }

    public func nextDeliveryDue() throws(StoreError) -> Timestamp? {
        contents.withLock { contents in
            contents.deliveries.values.compactMap { delivery in
                delivery.nextAttemptAt.map { max($0, delivery.claimedUntil ?? $0) }
            }.min()
        }
    }

    public func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        contents.withLock { contents in
            contents.deliveries.filter { $0.value.webhook == webhook }.sorted { $0.key > $1.key }.prefix(limit).map {
                $0.value.record($0.key)
            }
        }
    }

    public func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        contents.withLock { contents in
            let before = contents.deliveries.count
            contents.deliveries = contents.deliveries.filter { _, delivery in
                delivery.nextAttemptAt != nil
                    || (delivery.deliveredAt ?? delivery.lastAttempt?.at ?? delivery.event.at) >= cutoff
            }
            return before - contents.deliveries.count
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

    public func record(_ batch: StatsBatch) throws(StoreError) {
        contents.withLock { contents in
            for play in batch.plays {
                contents.plays[play.key] = contents.plays[play.key].map { $0.merged(with: play) } ?? play
            }
            var counts = batch.engagement
            for view in batch.identifiedViews where contents.viewReports[view.key] == nil {
                contents.viewReports[view.key] = view.reportedAt
                counts.append(view.count)
            }
            for count in EngagementCount.added(counts) {
                var total = contents.engagement[count.key] ?? EngagementCount(count.key, views: 0, clicks: 0)
                total.views += count.views
                total.clicks += count.clicks
                contents.engagement[count.key] = total
            }
            if let cutoff = batch.forgetReportsBefore {
                contents.viewReports = contents.viewReports.filter { $0.value >= cutoff }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        contents.withLock { contents in
            StatsRecords.select(
                plays: contents.plays.values, engagement: contents.engagement.values, of: serial, audience: audience,
                from: from, to: to)
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        contents.withLock { contents in
            contents.plays.values.filter { $0.carousel == serial && $0.audience == audience }
                .max { $0.startedAt < $1.startedAt }
        }
    }

    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        contents.withLock { contents in
            let serials = Set(contents.carousels.values.map(\.serial))
            for sighting in sightings where serials.contains(sighting.key.carousel) {
                contents.screens[sighting.key] = sighting.merged(into: contents.screens[sighting.key], timeout: timeout)
            }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        contents.withLock { Array($0.screens.values) }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        contents.withLock { contents in
            let before = contents.screens.count
            contents.screens = contents.screens.filter { $0.value.lastSeen >= cutoff }
            return before - contents.screens.count
        }
    }

    // MARK: Media

    public func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.media[media.id] == nil else { return false }
            var files: [MediaFile: [UInt8]] = [.original: media.original]
            for variant in media.variants { files[.variant(width: variant.width)] = variant.webp }
            contents.media[media.id] = (media.record, files)
            contents.append([AuditEntry(.uploadMedia, attribution, target: media.id)])
            return true
        }
    }

    public func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] {
        contents.withLock { media in
            guard let id else { return media.media.values.map(\.record) }
            return media.media[id].map { [$0.record] } ?? []
        }.sorted {
            ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
        }
    }

    public func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        contents.withLock { $0.media[id]?.files[file] }
    }

    public func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        contents.withLock { contents in
            guard contents.media[id] != nil else { return .notFound }
            let uses = contents.carousels.values.sorted { $0.name < $1.name }.flatMap {
                $0.definition.uses(ofImage: id)
            }
            guard uses.isEmpty else { return .inUse(uses) }
            contents.media[id] = nil
            contents.append([AuditEntry(.deleteMedia, attribution, target: id)])
            return .deleted
        }
    }
}
