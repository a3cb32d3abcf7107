import Carousel
import MicroHTTP
import Threading

/// The prepared reads and event streams of a carousel's audiences (docs/AUDIENCES.md), beside those
/// of screens that declare none (`CarouselHTTPOutlet`).
///
/// Prepared reads exist for audiences the banners name (their own state), made by the first read of
/// each: an audience nobody reads costs nothing. A read of any other audience is served the
/// default state's reads. Streams are kept per audience a subscriber declared, named by the banners or
/// not, so that its subscribers follow it when an edit names it or drops it; an audience's hub
/// goes with its last subscriber (at the next publication).
///
/// Lock order: a hub, then this, then a prepared read (a hub's first event reads them); this
/// lock is never held while a hub's is taken.
final class AudienceOutlets: Sendable {
    private struct Members {
        /// The latest state's `audienceStates`: all the prepared reads need of it.
        var states: [String: Carousel]
        var reads: [String: PreparedReads] = [:]
        var hubs: [String: EventHub] = [:]
        /// Subscribers on their way into a hub, by audience: its hub stays until they are in.
        var arriving: [String: Int] = [:]
    }

    private let members: Lock<Members>
    private let root: PreparedReads
    private let rootEvents: EventHub
    private let maker: OutletMaker

    init(initial: Carousel, root: PreparedReads, rootEvents: EventHub, maker: OutletMaker) {
        members = Lock(Members(states: initial.audienceStates))
        self.root = root
        self.rootEvents = rootEvents
        self.maker = maker
    }

    /// The prepared reads of `audience`'s screens, and whether they are its own (else the default's).
    func prepared(for audience: String?) -> (reads: PreparedReads, own: Bool) {
        guard let audience else { return (root, false) }
        return members.withLock { members in
            if let reads = members.reads[audience] { return (reads, true) }
            guard let state = members.states[audience] else { return (root, false) }
            // An audience's ETags name it: its versions are its own (docs/AUDIENCES.md).
            let reads = maker.preparedReads(state, instance: "\(root.instance)~\(audience)")
            members.reads[audience] = reads
            return (reads, true)
        }
    }

    /// A new subscriber of `audience`'s event stream (`EventHub.subscribe`).
    func subscribe(_ audience: String?, headers: [HTTPHeader]) -> ResponseStream {
        guard let audience else { return rootEvents.subscribe(headers: headers) }
        let hub = members.withLock { members in
            members.arriving[audience, default: 0] += 1
            if let hub = members.hubs[audience] { return hub }
            let hub = maker.hub(group: "\(rootEvents.group)~\(audience)") { [weak self, root] in
                self?.prepared(for: audience).reads.current ?? root.current
            }
            members.hubs[audience] = hub
            return hub
        }
        defer {
            members.withLock { members in
                members.arriving[audience]! -= 1
                if members.arriving[audience] == 0 { members.arriving[audience] = nil }
            }
        }
        return hub.subscribe(headers: headers)
    }

    /// Every audience's new state, inside the engine (after the default's).
    func publish(_ state: Carousel) {
        let (reads, hubs, changed) = members.withLock { members in
            let joined = state.audienceStates.keys.contains { members.states[$0] == nil }
            members.states = state.audienceStates
            let dropped = members.reads.keys.filter { state.audienceStates[$0] == nil }
            for name in dropped { members.reads[name] = nil }
            members.hubs = members.hubs.filter { name, hub in
                hub.subscriberCount > 0 || members.arriving[name] != nil
            }
            return (members.reads, members.hubs, joined || !dropped.isEmpty)
        }
        for (name, reads) in reads { reads.publish(state.audienceStates[name]!) }
        if changed { maker.audiencesChanged() }
        for (name, hub) in hubs {
            let version = state.state(for: name).version
            hub.publish(version: version) { self.prepared(for: name).reads.stateJSON }
        }
    }

    /// Ends every audience's streams: the carousel is gone.
    func close() {
        for hub in members.withLock({ Array($0.hubs.values) }) { hub.finishAll() }
    }
}

/// What every carousel's prepared reads and event hubs are made with, its audiences' included, one
/// for the service: a carousel keeps no closures of its own for audiences it may never have
/// (docs/PERFORMANCE.md, memory per carousel).
final class OutletMaker: Sendable {
    private let cors: CORSPolicy
    private let streams: StreamRegistry
    private let sourceSet: @Sendable (String) -> String?
    /// Called when an audience gains or loses prepared reads of its own: readers' copies of the old
    /// ones are stale.
    let audiencesChanged: @Sendable () -> Void

    init(
        cors: CORSPolicy, streams: StreamRegistry, sourceSet: @escaping @Sendable (String) -> String?,
        audiencesChanged: @escaping @Sendable () -> Void
    ) {
        self.cors = cors
        self.streams = streams
        self.sourceSet = sourceSet
        self.audiencesChanged = audiencesChanged
    }

    func preparedReads(_ state: Carousel, instance: String) -> PreparedReads {
        PreparedReads(initial: state, cors: cors, instance: instance, sourceSet: sourceSet)
    }

    func hub(group: String, current: @escaping @Sendable () -> (UInt64, [UInt8])) -> EventHub {
        EventHub(group: group, streams: streams, current: current)
    }
}
