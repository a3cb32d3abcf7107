import Carousel
import Definitions
import Logging
import Store
import TestSupport
import Testing
import Threading
import TimeZones

@testable import CarouselRuntime

/// On a store no other process writes, the fleet keeps the rows as it wrote them rather than
/// reading them all back at each tick (docs/SCREENS.md, "The fleet"). The same calls made to a
/// fleet whose store says it is shared, and so is read back at every tick, must list the same
/// screens in the same states since the same instants, and tell the same transitions.
@Suite("Fleet without read-back")
struct FleetMirrorTests {
    let clock = ManualClock(t0)
    let mirrored: Side
    let readBack: Side

    /// A fleet and its store; `lobby` shows b0, b1, b2 and `hall` b0, b1, 4 s each from t0.
    struct Side {
        let store: any CarouselStore
        let runtime: Runtime<RecordingOutlets>
        let told = Lock<[String]>([])

        init(_ store: any CarouselStore, clock: ManualClock, loadFrom stored: Bool = false) throws {
            self.store = store
            var carousels = try store.loadAll()
            if !stored {
                for (name, count) in [("lobby", 3), ("hall", 2)] {
                    let definition = CarouselDefinition(name: name, banners: sampleBanners(count))
                    carousels.append(
                        try store.create(definition, anchor: definition.newCarousel(at: t0).anchor, by: byTests))
                }
            }
            runtime = Runtime(
                store: store, loaded: carousels, outlets: RecordingOutlets(),
                logger: Logger(label: "test", minimumLevel: .critical), clock: clock.read,
                statsFlushInterval: .seconds(10),
                fleet: FleetSettings(maxScreens: 3, screenRetention: .seconds(120)), beforeFirstLoad: nil)
            runtime.fleet.observe { [told] entry in told.withLock { $0.append("\(entry.record.id) \(entry.state)") } }
        }

        var fleet: Fleet<RecordingOutlets> { runtime.fleet }
        func carousel(_ name: String) -> LiveCarousel<RecordingOutlet> { runtime.directory.carousel(named: name)! }
    }

    init() throws {
        mirrored = try Side(MemoryStore(), clock: clock)
        readBack = try Side(SharedMemoryStore(), clock: clock)
    }

    func at(_ seconds: Double) {
        clock.set(t0 + .milliseconds(Int64((seconds * 1000).rounded())))
    }

    /// Makes the same call on both sides; both must take it or refuse it alike.
    func onBoth(_ call: (Side) throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        let outcomes = [mirrored, readBack].map { side in Result { try call(side) }.map { "taken" } }
        #expect(
            outcomes.map { "\($0)" }.allSatisfy { $0 == "\(outcomes[0])" }, "\(outcomes)",
            sourceLocation: sourceLocation)
    }

    func hear(_ id: String, on carousel: String) {
        onBoth { side in
            try side.fleet.hear(ScreenID(id)!, on: side.carousel(carousel), userAgent: "Kiosk/\(id)", audience: nil)
        }
    }

    func report(_ id: String, on carousel: String, _ banner: String, at seconds: Double) {
        onBoth { side in
            let receipt = ReportedReceipt(
                banner: banner, version: 1, shownAt: t0 + .milliseconds(Int64((seconds * 1000).rounded())),
                offsetMs: 2, rttMs: 12)
            try side.fleet.report([receipt], from: ScreenID(id)!, on: side.carousel(carousel), userAgent: nil)
        }
    }

    /// Ticks both; returns what the mirrored side lists, after checking the other lists the same.
    @discardableResult
    func tick(sourceLocation: SourceLocation = #_sourceLocation) -> [String: ScreenState] {
        mirrored.fleet.tick()
        readBack.fleet.tick()
        let listed = mirrored.fleet.entries()
        #expect(listed == readBack.fleet.entries(), sourceLocation: sourceLocation)
        #expect(
            mirrored.told.withLock { $0 } == readBack.told.withLock { $0 }, sourceLocation: sourceLocation)
        return Dictionary(uniqueKeysWithValues: listed.map { ($0.record.id.rawValue, $0.state) })
    }

    @Test func listsWhatReadingEveryRowBackLists() async throws {
        at(1)
        hear("a", on: "lobby")
        report("c", on: "lobby", "b0", at: 0.01)
        let streams = [mirrored, readBack].map { side in
            try! side.fleet.hold(ScreenID("b")!, on: side.carousel("hall"), userAgent: "TV", audience: nil)
        }
        #expect(tick() == ["a": .online, "b": .online, "c": .online])

        at(4.5)
        report("c", on: "lobby", "b1", at: 4.01)
        report("d", on: "lobby", "b2", at: 4.2)  // b1 then: b2 is early
        hear("e", on: "lobby")  // a fourth screen on lobby: past maxScreens on both
        #expect(tick() == ["a": .online, "b": .online, "c": .online, "d": .outOfStep(.early)])

        // c heard but its receipts stop: frozen once two flips are past the grace; a silent: offline.
        at(20.1)
        hear("c", on: "lobby")
        #expect(tick() == ["a": .online, "b": .online, "c": .outOfStep(.frozen), "d": .outOfStep(.early)])
        at(31.5)
        #expect(tick()["a"] == .offline)

        // The stream ends: b is silent from now on.
        at(40)
        for (side, stream) in zip([mirrored, readBack], streams) { side.fleet.release(stream) }
        #expect(tick()["b"] == .online)

        // Past the retention, checked a minute after the last check: a, c and d forgotten, b kept.
        at(61)
        tick()
        at(160)
        #expect(tick() == ["b": .offline])
        hear("e", on: "lobby")
        #expect(tick() == ["b": .offline, "e": .online])

        // A carousel deleted takes its screens with it.
        for side in [mirrored, readBack] {
            try await side.runtime.directory.delete(side.carousel("hall"), if: nil, by: tester)
        }
        #expect(tick() == ["e": .online])
    }

    /// A tick judges only the screens that may have changed state (docs/SCREENS.md, "The fleet"):
    /// each is judged again when it goes offline or is frozen, and every screen of a carousel
    /// whose history moved at once. Ticking every quarter second, it must see each change at the
    /// same tick as the fleet that reads every row back and judges them all.
    @Test func judgingOnlyTheScreensDueSeesEveryChangeAtItsTick() async throws {
        at(1)
        let streams = [mirrored, readBack].map { side in
            try! side.fleet.hold(ScreenID("s")!, on: side.carousel("lobby"), userAgent: "TV", audience: nil)
        }
        hear("a", on: "hall")
        report("s", on: "lobby", "b0", at: 0.01)  // in step; lobby changes at 4, 8: frozen from 16
        at(4.5)
        report("h", on: "hall", "b1", at: 4.01)  // hall changes at 8, 12: frozen from 20
        at(9.5)
        report("t", on: "lobby", "b2", at: 8.01)  // 12, 16 would make it frozen from 24…
        var firstSeen: [String: Double] = [:]
        func tick(through seconds: Double, from start: Double) {
            for quarter in Int(start * 4)...Int(seconds * 4) {
                let instant = Double(quarter) / 4
                at(instant)
                for (id, state) in self.tick() where firstSeen["\(id) \(state)"] == nil {
                    firstSeen["\(id) \(state)"] = instant
                }
            }
        }
        tick(through: 10, from: 9.75)
        // …but a command at 10 moves lobby's history: b0 from 10, b1 from 14: frozen from 22.
        for side in [mirrored, readBack] { _ = try await side.carousel("lobby").perform(.next, by: tester) }
        tick(through: 30, from: 10.25)
        // The stream ends at 30: s is last heard then, offline past 60.
        for (side, stream) in zip([mirrored, readBack], streams) { side.fleet.release(stream) }
        tick(through: 61, from: 30.25)
        #expect(firstSeen["s outOfStep(Carousel.OutOfStepReason.frozen)"] == 16)
        #expect(firstSeen["h outOfStep(Carousel.OutOfStepReason.frozen)"] == 20)
        #expect(firstSeen["t outOfStep(Carousel.OutOfStepReason.frozen)"] == 22)
        #expect(firstSeen["a offline"] == 31.25)  // heard at 1: offline once more than 30 s past it
        #expect(firstSeen["h offline"] == 34.75)
        #expect(firstSeen["t offline"] == 39.75)
        #expect(firstSeen["s offline"] == 60.25)
    }

    @Test func aFleetStartingListsWhatTheStoreKept() throws {
        at(1)
        hear("a", on: "lobby")
        report("c", on: "hall", "b0", at: 0.5)
        tick()
        let restarted = try Side(mirrored.store, clock: clock, loadFrom: true)
        at(2)
        restarted.fleet.tick()
        #expect(restarted.fleet.entries() == mirrored.fleet.entries())
        #expect(restarted.fleet.entries().count == 2)
    }
}

/// A memory store that says it is shared: a fleet reads every row back from it at each tick.
final class SharedMemoryStore: CarouselStore {
    private let store = MemoryStore()

    var description: String { "shared memory store" }
    var identity: String { store.identity }
    var isReadOnly: Bool { false }
    var isShared: Bool { true }

    func loadAll() throws(StoreError) -> [StoredCarousel] { try store.loadAll() }

    func create(_ definition: CarouselDefinition, anchor: CarouselAnchor, by attribution: Attribution)
        throws(StoreError) -> StoredCarousel
    {
        try store.create(definition, anchor: anchor, by: attribution)
    }

    func load(named name: String) throws(StoreError) -> StoredCarousel? { try store.load(named: name) }

    func modify(
        _ key: CarouselKey, _ purpose: WritePurpose, expecting expected: StoredCarousel?,
        _ decide: (StoredCarousel) -> CarouselWrite?
    ) throws(StoreError) -> StoredCarousel {
        try store.modify(key, purpose, expecting: expected, decide)
    }

    func delete(_ key: CarouselKey, expectedRevision: UInt64, by attribution: Attribution) throws(StoreError) {
        try store.delete(key, expectedRevision: expectedRevision, by: attribution)
    }

    func seed(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) -> Bool { try store.seed(definitions, anchor: anchor, by: attribution) }

    func revisions(of serial: Int64) throws(StoreError) -> [RevisionRecord] { try store.revisions(of: serial) }

    func revision(_ revision: UInt64, of serial: Int64) throws(StoreError) -> Revision? {
        try store.revision(revision, of: serial)
    }

    func record(_ batch: StatsBatch) throws(StoreError) { try store.record(batch) }

    func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try store.stats(of: serial, audience: audience, from: from, to: to)
    }

    func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try store.lastPlay(of: serial, audience: audience)
    }

    func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        try store.saveScreens(sightings, timeout: timeout)
    }

    func keepScreens(_ rows: [ScreenRecord]) throws(StoreError) { try store.keepScreens(rows) }

    func screens() throws(StoreError) -> [ScreenRecord] { try store.screens() }

    func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try store.forgetScreens(silentSince: cutoff)
    }

    func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError) {
        try store.forgetScreens(keys, audit: audit)
    }

    func importDefinitions(
        _ definitions: [CarouselDefinition], anchor: (CarouselDefinition, StoredCarousel?) -> CarouselAnchor,
        by attribution: Attribution
    ) throws(StoreError) {
        try store.importDefinitions(definitions, anchor: anchor, by: attribution)
    }

    func saveMedia(_ media: NewMedia, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.saveMedia(media, by: attribution)
    }

    func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.saveToken(token, by: attribution)
    }

    func tokens() throws(StoreError) -> [TokenRecord] { try store.tokens() }

    func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.deleteToken(named: name, by: attribution)
    }

    func auditLog(_ query: AuditQuery) throws(StoreError) -> [AuditRecord] { try store.auditLog(query) }

    func schedule(_ change: PendingChange) throws(StoreError) -> PendingChange { try store.schedule(change) }

    func pendingChanges() throws(StoreError) -> [PendingChange] { try store.pendingChanges() }

    func saveWebhook(_ webhook: WebhookRecord, by attribution: Attribution, keepingAtMost limit: Int)
        throws(StoreError) -> WebhookRecord?
    {
        try store.saveWebhook(webhook, by: attribution, keepingAtMost: limit)
    }

    func webhooks() throws(StoreError) -> [WebhookRecord] { try store.webhooks() }

    func deleteWebhook(_ id: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.deleteWebhook(id, by: attribution)
    }

    func queue(_ events: [QueuedEvent]) throws(StoreError) { try store.queue(events) }

    func claimDeliveries(dueAt now: Timestamp, until: Timestamp, limit: Int) throws(StoreError) -> [DueDelivery] {
        try store.claimDeliveries(dueAt: now, until: until, limit: limit)
    }

    func finishDelivery(_ number: Int64, _ attempt: DeliveryAttempt, retryAt: Timestamp?) throws(StoreError) {
        try store.finishDelivery(number, attempt, retryAt: retryAt)
    }

    func nextDeliveryDue() throws(StoreError) -> Timestamp? { try store.nextDeliveryDue() }

    func deliveries(of webhook: Int64, limit: Int) throws(StoreError) -> [DeliveryRecord] {
        try store.deliveries(of: webhook, limit: limit)
    }

    func forgetDeliveries(doneBefore cutoff: Timestamp) throws(StoreError) -> Int {
        try store.forgetDeliveries(doneBefore: cutoff)
    }

    func cancelPending(_ id: Int64, of carousel: Int64, by attribution: Attribution) throws(StoreError) -> Bool {
        try store.cancelPending(id, of: carousel, by: attribution)
    }

    func mediaRecords(id: String?) throws(StoreError) -> [MediaRecord] { try store.mediaRecords(id: id) }

    func mediaBytes(of id: String, _ file: MediaFile) throws(StoreError) -> [UInt8]? {
        try store.mediaBytes(of: id, file)
    }

    func deleteMedia(_ id: String, by attribution: Attribution) throws(StoreError) -> MediaDeletion {
        try store.deleteMedia(id, by: attribution)
    }
}
