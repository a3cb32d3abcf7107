import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// The carousels as HTTP shows them: the runtime's outlets (`CarouselOutlets`). Each carousel in
/// service gets its prepared reads and its event stream (`CarouselHTTPOutlet`); reads find them in their
/// thread's copies (`ReadCache`), which hear here of every carousel added or removed.
final class HTTPOutlets: CarouselOutlets {
    private let readCache: ReadCache
    /// One for every carousel (none of a carousel's own closures: 10,000 carousels).
    private let maker: OutletMaker

    init(cors: CORSPolicy, streams: StreamRegistry, media: MediaIndex? = nil) {
        let readCache = ReadCache()
        self.readCache = readCache
        maker = OutletMaker(
            cors: cors, streams: streams, sourceSet: { [media] in media?.sourceSet(forImage: $0) },
            audiencesChanged: { readCache.membershipChanged() })
    }

    func outlet(for carousel: StoredCarousel, instance: String, state: Carousel) -> CarouselHTTPOutlet {
        let prepared = maker.preparedReads(state, instance: instance)
        let events = maker.hub(group: "carousel-\(carousel.serial)") { [prepared] in prepared.current }
        let audiences = AudienceOutlets(initial: state, root: prepared, rootEvents: events, maker: maker)
        return CarouselHTTPOutlet(reads: prepared, events: events, audiences: audiences)
    }

    func membershipChanged() {
        readCache.membershipChanged()
    }

    /// The response to a read of `resource` of the carousel `name` from the calling thread's
    /// copies; `find` looks the carousel up the shared way when this thread has no copy (nil: no
    /// such carousel).
    func readResponse(
        carousel name: String, audience: String?, _ resource: PreparedReads.Resource, origin: String?,
        ifNoneMatch: String?, find: (String) -> CarouselHTTPOutlet?
    ) -> PreparedResponse? {
        readCache.response(carousel: name, audience: audience, resource, origin: origin, ifNoneMatch: ifNoneMatch) {
            name, audience in
            find(name)?.audiences.prepared(for: audience)
        }
    }
}

/// One carousel as HTTP shows it: the read responses of its latest state and its event stream,
/// for screens that declare no audience and for each audience, all fed by its engine.
struct CarouselHTTPOutlet: CarouselOutlet {
    let reads: PreparedReads
    let events: EventHub
    let audiences: AudienceOutlets

    func publish(_ state: Carousel) {
        reads.publish(state)
        events.publish(version: state.version) { reads.stateJSON }
        audiences.publish(state)
    }

    func close() {
        events.finishAll()
        audiences.close()
    }
}

/// A carousel in service, as the HTTP adapter holds it.
typealias ServedCarousel = LiveCarousel<CarouselHTTPOutlet>

extension LiveCarousel where Outlet == CarouselHTTPOutlet {
    var reads: PreparedReads { outlet.reads }

    /// A new subscriber of the event stream of `audience`'s screens.
    func subscribe(_ audience: String?, headers: [HTTPHeader]) -> ResponseStream {
        outlet.audiences.subscribe(audience, headers: headers)
    }

    /// `state` (a command's answer) as `audience`'s screens see it, with `extra` headers.
    func stateAnswer(_ state: Carousel, audience: String?, origin: String?, extra: [HTTPHeader]) -> PreparedResponse {
        PreparedResponse(
            outlet.audiences.prepared(for: audience).reads.stateAnswer(
                of: state.state(for: audience), origin: origin, extra: extra))
    }

    /// The definition's strong ETag, for `If-Match`.
    func definitionTag(revision: UInt64) -> String {
        EntityTag.definition(instance: instance, revision: revision)
    }

    /// `If-Match` as the runtime checks it: true when it names the definition at a revision.
    func condition(ifMatch: String?) -> RevisionCondition? {
        guard let ifMatch else { return nil }
        return { [instance] revision in
            EntityTag.ifMatch(ifMatch, EntityTag.definition(instance: instance, revision: revision))
        }
    }
}
