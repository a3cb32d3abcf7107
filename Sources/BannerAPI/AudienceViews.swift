import Carousel
import Locking
import MicroHTTP

/// The read views and event streams of a carousel's audiences (docs/AUDIENCES.md), beside those
/// of screens that declare none (`CarouselViews`).
///
/// Read views exist for audiences the banners name (their own state), made by the first read of
/// each: an audience nobody reads costs nothing. A read of any other audience is served the
/// default views. Streams are kept per audience a subscriber declared, named by the banners or
/// not, so that its subscribers follow it when an edit names it or drops it; an audience's hub
/// goes with its last subscriber (at the next publication).
///
/// Lock order: a hub, then this, then a read view (a hub's first event reads the views); this
/// lock is never held while a hub's is taken.
final class AudienceViews: Sendable {
    private struct Members {
        /// The latest state's `audienceStates`: all the views need of it.
        var states: [String: Carousel]
        var views: [String: ReadViews] = [:]
        var hubs: [String: EventHub] = [:]
        /// Subscribers on their way into a hub, by audience: its hub stays until they are in.
        var arriving: [String: Int] = [:]
    }

    private let members: Lock<Members>
    private let root: ReadViews
    private let rootEvents: EventHub
    private let maker: ViewMaker

    init(initial: Carousel, root: ReadViews, rootEvents: EventHub, maker: ViewMaker) {
        members = Lock(Members(states: initial.audienceStates))
        self.root = root
        self.rootEvents = rootEvents
        self.maker = maker
    }

    /// The read views of `audience`'s screens, and whether they are its own (else the default's).
    func views(for audience: String?) -> (views: ReadViews, own: Bool) {
        guard let audience else { return (root, false) }
        return members.withLock { members in
            if let views = members.views[audience] { return (views, true) }
            guard let state = members.states[audience] else { return (root, false) }
            // An audience's ETags name it: its versions are its own (docs/AUDIENCES.md).
            let views = maker.views(state, instance: "\(root.instance)~\(audience)")
            members.views[audience] = views
            return (views, true)
        }
    }

    /// A new subscriber of `audience`'s event stream (`EventHub.subscribe`).
    func subscribe(_ audience: String?, headers: [HTTPHeader]) -> ResponseStream {
        guard let audience else { return rootEvents.subscribe(headers: headers) }
        let hub = members.withLock { members in
            members.arriving[audience, default: 0] += 1
            if let hub = members.hubs[audience] { return hub }
            let hub = maker.hub(group: "\(rootEvents.group)~\(audience)") { [weak self, root] in
                self?.views(for: audience).views.current ?? root.current
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
        let (views, hubs, changed) = members.withLock { members in
            let joined = state.audienceStates.keys.contains { members.states[$0] == nil }
            members.states = state.audienceStates
            let dropped = members.views.keys.filter { state.audienceStates[$0] == nil }
            for name in dropped { members.views[name] = nil }
            members.hubs = members.hubs.filter { name, hub in
                hub.subscriberCount > 0 || members.arriving[name] != nil
            }
            return (members.views, members.hubs, joined || !dropped.isEmpty)
        }
        for (name, views) in views { views.publish(state.audienceStates[name]!) }
        if changed { maker.audiencesChanged() }
        for (name, hub) in hubs {
            let version = state.state(for: name).version
            hub.publish(version: version) { self.views(for: name).views.stateJSON }
        }
    }

    /// Ends every audience's streams: the carousel is gone.
    func close() {
        for hub in members.withLock({ Array($0.hubs.values) }) { hub.finishAll() }
    }
}

/// What every carousel's read views and event hubs are made with, its audiences' included, one
/// for the service: a carousel keeps no closures of its own for audiences it may never have
/// (docs/PERFORMANCE.md, memory per carousel).
final class ViewMaker: Sendable {
    private let cors: CORSPolicy
    private let streams: StreamRegistry
    private let sourceSet: @Sendable (String) -> String?
    /// Called when an audience gains or loses read views of its own: readers' copies of the old
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

    func views(_ state: Carousel, instance: String) -> ReadViews {
        ReadViews(initial: state, cors: cors, instance: instance, sourceSet: sourceSet)
    }

    func hub(group: String, current: @escaping @Sendable () -> (UInt64, [UInt8])) -> EventHub {
        EventHub(group: group, streams: streams, current: current)
    }
}
