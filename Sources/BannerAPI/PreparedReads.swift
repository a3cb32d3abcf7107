import Carousel
import JSON
import MicroHTTP
import Synchronization
import Threading

/// The read endpoints' responses for the latest carousel state, each built once per change, by the
/// first read (or command) that needs it: for each resource a 200 and a 304, in one variant per
/// CORS origin. Reads queue copies of them that their thread keeps (`ReadCache`): no encoding, no
/// allocation, no `await`. A carousel nobody reads costs nothing per advance but the publication
/// itself, and a command builds only the response it answers (docs/PERFORMANCE.md, carousels at
/// scale and "What a command costs").
final class PreparedReads: Sendable {
    enum Resource: Int, CaseIterable {
        case state, banners, index

        var name: String {
            switch self {
            case .state: "banner"
            case .banners: "banners"
            case .index: "index"
            }
        }
    }

    private let cors: CORSPolicy
    /// `cors.variants`, computed once: reads must not build it anew.
    private let variantOrigins: [String?]
    /// Distinguishes this process's ETags from those of an earlier run, whose versions restart at 1.
    let instance: String
    /// The `srcset` of a banner whose image is in the media library.
    private let sourceSet: @Sendable (String) -> String?
    /// The latest state, and what has been built of it so far.
    private struct Latest: Sendable {
        var carousel: Carousel
        /// The banners as last encoded (nil until a read needed them); reused while the list is
        /// unchanged.
        var encodedBanners: EncodedBanners?
        /// The resources' bodies, by `Resource.rawValue`, each encoded on first need.
        var bodies: [[UInt8]?]
        /// The representations, by position (`index(of:origin:)`), each built on first need.
        var representations: [Representation?]

        init(carousel: Carousel, representationCount: Int) {
            self.carousel = carousel
            bodies = Array(repeating: nil, count: Resource.allCases.count)
            representations = Array(repeating: nil, count: representationCount)
        }

        /// A new state: nothing built of the old one applies to it.
        mutating func replace(with carousel: Carousel) {
            self.carousel = carousel
            for index in bodies.indices { bodies[index] = nil }
            for index in representations.indices { representations[index] = nil }
        }

        /// The banners of `carousel`, encoded now unless they were already.
        mutating func banners(sourceSet: @escaping @Sendable (String) -> String?) -> EncodedBanners {
            let banners =
                encodedBanners?.reused(for: carousel.banners) ?? EncodedBanners(carousel.banners, sourceSet: sourceSet)
            encodedBanners = banners
            return banners
        }

        /// `resource`'s body for `carousel`, encoded now unless it was already.
        mutating func body(of resource: Resource, sourceSet: @escaping @Sendable (String) -> String?) -> [UInt8] {
            if let body = bodies[resource.rawValue] { return body }
            let body =
                switch resource {
                case .state: CarouselJSON.state(carousel, banners: banners(sourceSet: sourceSet))
                case .banners: CarouselJSON.banners(carousel, banners: banners(sourceSet: sourceSet))
                case .index: CarouselJSON.index(carousel)
                }
            bodies[resource.rawValue] = body
            return body
        }
    }

    private let latest: Lock<Latest>
    /// Moves after every publication (`ReadCache` compares it with its copies').
    let publication = Atomic<UInt64>(0)

    /// `sourceSet` gives the `srcset` of a banner whose image is in the media library.
    init(
        initial carousel: Carousel, cors: CORSPolicy = .off, instance: String = EntityTag.newInstance(),
        sourceSet: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.cors = cors
        self.variantOrigins = cors.variants
        self.instance = instance
        self.sourceSet = sourceSet
        latest = Lock(Latest(carousel: carousel, representationCount: cors.variants.count * Resource.allCases.count))
    }

    /// How many representations there are: one per resource in each CORS variant.
    var representationCount: Int { variantOrigins.count * Resource.allCases.count }

    /// The position of `resource`'s representation for a client whose origin resolved to `origin`.
    func index(of resource: Resource, origin: String?) -> Int {
        variant(for: origin) * Resource.allCases.count + resource.rawValue
    }

    /// The latest representation at `index`, and the publication it belongs to.
    func representation(at index: Int) -> (representation: Representation, publication: UInt64) {
        latest.withLock { latest in
            (built(at: index, in: &latest), publication.load(ordering: .relaxed))
        }
    }

    /// The representation at `index` of `latest`'s state, built now unless it was already.
    private func built(at index: Int, in latest: inout Latest) -> Representation {
        if let representation = latest.representations[index] { return representation }
        let resource = Resource(rawValue: index % Resource.allCases.count)!
        let representation = Representation(
            etag: EntityTag.make(instance: instance, version: latest.carousel.version, resource: resource.name),
            body: latest.body(of: resource, sourceSet: sourceSet),
            headers: Self.jsonHeaders + cors.headers(for: variantOrigins[index / Resource.allCases.count]))
        latest.representations[index] = representation
        return representation
    }

    /// The compact JSON of the latest state (for the event stream).
    var stateJSON: [UInt8] { current.json }

    /// The latest state's version and compact JSON, together.
    var current: (version: UInt64, json: [UInt8]) {
        latest.withLock { ($0.carousel.version, $0.body(of: .state, sourceSet: sourceSet)) }
    }

    /// A command's answer: the state `carousel` as a read of it is answered (with its ETag when it
    /// is the latest, its body the one reads and streams share), plus `extra` headers. Plain
    /// values, made into one response by the caller: no read's representation is built for it
    /// (docs/PERFORMANCE.md, "What a command costs").
    func stateAnswer(of carousel: Carousel, origin: String?, extra: [HTTPHeader]) -> Response {
        let (latestBody, banners) = latest.withLock { latest in
            (
                latest.carousel.version == carousel.version ? latest.body(of: .state, sourceSet: sourceSet) : nil,
                latest.banners(sourceSet: sourceSet)
            )
        }
        var headers = Self.jsonHeaders + cors.headers(for: origin)
        if latestBody != nil {
            headers.append(
                HTTPHeader(
                    "ETag", EntityTag.make(instance: instance, version: carousel.version, resource: Resource.state.name)
                ))
        }
        let body = latestBody ?? CarouselJSON.state(carousel, banners: banners.reused(for: carousel.banners))
        return Response(status: 200, headers: headers + extra, body: body)
    }

    /// The position of `origin`'s variant; without an origin (CORS off, or not allowed), the first.
    private func variant(for origin: String?) -> Int {
        guard let origin else { return 0 }
        return variantOrigins.firstIndex(of: origin) ?? 0
    }

    /// Called by the engine with every new state: cheap, the responses are built by the next read. A
    /// state of the same version and lineup is the same to its readers (only another audience's
    /// state moved, docs/AUDIENCES.md): its responses and the readers' copies stand.
    func publish(_ carousel: Carousel) {
        latest.withLock { latest in
            let unchanged = latest.carousel.version == carousel.version && latest.carousel.lineup == carousel.lineup
            guard !unchanged else {
                latest.carousel = carousel
                return
            }
            latest.replace(with: carousel)
            publication.add(1, ordering: .releasing)
        }
    }

    static let jsonContentType = HTTPHeader("Content-Type", "application/json; charset=utf-8")

    static let jsonHeaders = [
        jsonContentType,
        // Caches may keep a copy but must ask first: the banner changes every few seconds.
        HTTPHeader("Cache-Control", "no-cache"),
    ]

    /// A JSON document no cache may keep: the admin role's answers (who changed what, a
    /// token's secret, the library).
    static func uncached(_ object: JSONObject, status: Int = 200, headers: [HTTPHeader] = []) -> PreparedResponse {
        PreparedResponse(
            Response(
                status: status, headers: [jsonContentType, HTTPHeader("Cache-Control", "no-store")] + headers,
                body: object.line))
    }
}

/// Strong entity tags of the read resources: `"<instance>-<version>-<resource>"`.
enum EntityTag {
    static func make(instance: String, version: UInt64, resource: String) -> String {
        "\"\(instance)-\(version)-\(resource)\""
    }

    /// A carousel definition's tag, for `If-Match` on admin writes.
    static func definition(instance: String, revision: UInt64) -> String {
        make(instance: instance, version: revision, resource: "definition")
    }

    /// A random tag for this process.
    static func newInstance() -> String {
        String(UInt32.random(in: .min ... .max), radix: 36)
    }

    /// True when an If-None-Match value (`"a"`, `W/"a", "b"`, `*`) names `etag`.
    static func matches(_ ifNoneMatch: String, _ etag: String) -> Bool {
        if ifNoneMatch == etag { return true }  // the usual case, one tag sent back as received
        return ifNoneMatch.split(separator: ",").contains { (candidate: Substring) -> Bool in
            var tag = String(candidate).trimmingCharacters(in: " \t")
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == etag
        }
    }
}

extension EntityTag {
    /// True when an If-Match value (`"a"`, `"a", "b"`, `*`) names `etag`. Strong comparison:
    /// a weak tag (`W/"a"`) never matches (RFC 9110, 13.1.1).
    static func ifMatch(_ ifMatch: String, _ etag: String) -> Bool {
        ifMatch.split(separator: ",").contains { candidate in
            let tag = String(candidate).trimmingCharacters(in: " \t")
            return tag == "*" || tag == etag
        }
    }
}
