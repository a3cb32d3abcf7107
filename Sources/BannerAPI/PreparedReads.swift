import Carousel
import JSON
import MicroHTTP
import Synchronization
import Threading

/// The read endpoints' responses for the latest carousel state, built once per change, by the
/// first read after it: for each resource a 200 and a 304, in one variant per CORS origin. Reads
/// queue copies of them that their thread keeps (`ReadCache`): no encoding, no allocation, no
/// `await`. A carousel nobody reads costs nothing per advance but the publication itself
/// (docs/PERFORMANCE.md, carousels at scale).
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

    fileprivate struct Responses: Sendable {
        let stateJSON: [UInt8]
        /// Indexed by the position of the CORS variant in `cors.variants`, then by resource.
        let variants: [[Representation]]
    }

    private let cors: CORSPolicy
    /// `cors.variants`, computed once: reads must not build it anew.
    private let variantOrigins: [String?]
    /// Distinguishes this process's ETags from those of an earlier run, whose versions restart at 1.
    let instance: String
    /// The `srcset` of a banner whose image is in the media library.
    private let sourceSet: @Sendable (String) -> String?
    /// The latest state, and its responses once a read has asked for them.
    private struct Latest: Sendable {
        var carousel: Carousel
        /// The banners as last encoded (nil until a read needed them); reused while the list is
        /// unchanged.
        var encodedBanners: EncodedBanners?
        var responses: Responses?

        /// The banners of `carousel`, encoded now unless they were already.
        mutating func banners(sourceSet: @escaping @Sendable (String) -> String?) -> EncodedBanners {
            let banners =
                encodedBanners?.reused(for: carousel.banners) ?? EncodedBanners(carousel.banners, sourceSet: sourceSet)
            encodedBanners = banners
            return banners
        }

        /// The responses of `carousel`, built now if no read has built them since it was published.
        mutating func built(cors: CORSPolicy, instance: String, sourceSet: @escaping @Sendable (String) -> String?)
            -> Responses
        {
            if let responses { return responses }
            let responses = PreparedReads.responses(
                of: carousel, banners: banners(sourceSet: sourceSet), cors: cors, instance: instance)
            self.responses = responses
            return responses
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
        latest = Lock(Latest(carousel: carousel))
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
            let responses = latest.built(cors: cors, instance: instance, sourceSet: sourceSet)
            return (
                responses.variants[index / Resource.allCases.count][index % Resource.allCases.count],
                publication.load(ordering: .relaxed)
            )
        }
    }

    /// The compact JSON of the latest state (for the event stream).
    var stateJSON: [UInt8] { current.json }

    /// The latest state's version and compact JSON, together.
    var current: (version: UInt64, json: [UInt8]) {
        latest.withLock {
            ($0.carousel.version, $0.built(cors: cors, instance: instance, sourceSet: sourceSet).stateJSON)
        }
    }

    /// The state response for `carousel`: the one already published when it is that version
    /// (the usual case for a command's answer), else encoded now.
    func state(of carousel: Carousel, origin: String?) -> PreparedResponse {
        let variant = variant(for: origin)
        let (published, banners) = latest.withLock { latest in
            (
                latest.carousel.version == carousel.version
                    ? latest.built(cors: cors, instance: instance, sourceSet: sourceSet).variants[variant][
                        Resource.state.rawValue
                    ].ok : nil,
                latest.banners(sourceSet: sourceSet)
            )
        }
        if let published { return published }
        let json = CarouselJSON.state(carousel, banners: banners.reused(for: carousel.banners))
        return Self.prepare(json, headers: cors.headers(for: origin))
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
            latest.carousel = carousel
            guard !unchanged else { return }
            latest.responses = nil
            publication.add(1, ordering: .releasing)
        }
    }

    fileprivate static func responses(
        of carousel: Carousel, banners: EncodedBanners, cors: CORSPolicy, instance: String
    )
        -> Responses
    {
        let state = CarouselJSON.state(carousel, banners: banners)
        let bodies: [Resource: [UInt8]] = [
            .state: state,
            .banners: CarouselJSON.banners(carousel, banners: banners),
            .index: CarouselJSON.index(carousel),
        ]
        let variants = cors.variants.map { origin in
            Resource.allCases.map { resource in
                Representation(
                    etag: EntityTag.make(instance: instance, version: carousel.version, resource: resource.name),
                    body: bodies[resource]!, headers: jsonHeaders + cors.headers(for: origin))
            }
        }
        return Responses(stateJSON: state, variants: variants)
    }

    static let jsonContentType = HTTPHeader("Content-Type", "application/json; charset=utf-8")

    static let jsonHeaders = [
        jsonContentType,
        // Caches may keep a copy but must ask first: the banner changes every few seconds.
        HTTPHeader("Cache-Control", "no-cache"),
    ]

    /// A 200 JSON response, ready to queue.
    static func prepare(_ json: [UInt8], headers: [HTTPHeader] = []) -> PreparedResponse {
        PreparedResponse(Response(status: 200, headers: jsonHeaders + headers, body: json))
    }

    /// A JSON document no cache may keep: the admin role's answers (who changed what, a
    /// token's secret, the library).
    static func uncached(_ object: JSONObject, status: Int = 200, headers: [HTTPHeader] = []) -> PreparedResponse {
        PreparedResponse(
            Response(
                status: status, headers: [jsonContentType, HTTPHeader("Cache-Control", "no-store")] + headers,
                body: object.bytes + [UInt8(ascii: "\n")]))
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
