import Carousel
import Definitions
import Threading
import TimeZones

/// Carousels in this process's memory: nothing survives it. For tests and benchmarks
/// (`--store memory`).
public final class MemoryStore: StoreBackend, CarouselDefinitionStore {
    struct Contents {
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

    let contents = Lock(Contents())
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
}

extension MemoryStore: CarouselStore {}
