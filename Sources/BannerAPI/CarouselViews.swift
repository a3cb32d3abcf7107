import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// The carousels as HTTP shows them: the runtime's outlets (`CarouselOutlets`). Each carousel in
/// service gets its read views and its event stream (`CarouselViews`); reads find them in their
/// thread's copies (`ReadCache`), which hear here of every carousel added or removed.
final class HTTPViews: CarouselOutlets {
    private let cors: CORSPolicy
    private let streams: StreamRegistry
    private let reads = ReadCache()
    private let media: MediaIndex?

    init(cors: CORSPolicy, streams: StreamRegistry, media: MediaIndex? = nil) {
        self.cors = cors
        self.streams = streams
        self.media = media
    }

    func outlet(for carousel: StoredCarousel, instance: String, state: Carousel) -> CarouselViews {
        let views = ReadViews(
            initial: state, cors: cors, instance: instance, sourceSet: { [media] in media?.sourceSet(forImage: $0) })
        let events = EventHub(group: "carousel-\(carousel.serial)", streams: streams) { [views] in views.current }
        return CarouselViews(views: views, events: events)
    }

    func membershipChanged() {
        reads.membershipChanged()
    }

    /// The response to a read of `resource` of the carousel `name` from the calling thread's
    /// copies; `find` looks the carousel up the shared way when this thread has no copy (nil: no
    /// such carousel).
    func readResponse(
        carousel name: String, _ resource: ReadViews.Resource, origin: String?, ifNoneMatch: String?,
        find: (String) -> CarouselViews?
    ) -> PreparedResponse? {
        reads.response(carousel: name, resource, origin: origin, ifNoneMatch: ifNoneMatch) { name in
            find(name)?.views
        }
    }
}

/// One carousel as HTTP shows it: the read responses of its latest state and its event stream,
/// both fed by its engine.
struct CarouselViews: CarouselOutlet {
    let views: ReadViews
    let events: EventHub

    func publish(_ state: Carousel) {
        views.publish(state)
        events.publish(version: state.version) { views.stateJSON }
    }

    func close() {
        events.finishAll()
    }
}

/// A carousel in service, as the HTTP adapter holds it.
typealias ServedCarousel = LiveCarousel<CarouselViews>

extension LiveCarousel where Outlet == CarouselViews {
    var views: ReadViews { outlet.views }
    var events: EventHub { outlet.events }

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
