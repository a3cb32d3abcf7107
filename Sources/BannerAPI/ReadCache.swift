import Definitions
import MicroHTTP
import Synchronization
import Threading

/// The read path's responses, copied once per worker thread (docs/ARCHITECTURE.md, "The read
/// path"): a read finds its carousel and its pre-built response in its own thread's copies,
/// without a lock, and queues a response whose reference counts (Swift's and libmicrohttpd's,
/// behind a mutex) only that thread touches. Shared between the cores, and only read by a read,
/// are two counters: the directory's membership changes and each carousel's publications. A read
/// that sees either move takes the shared way once (the directory's lock, then the reads' lock)
/// and copies what it needs.
///
/// Freshness: a carousel's reads are replaced, then its publication counter moves; a carousel is
/// added or removed, then the membership counter moves. A read that starts after a change has
/// returned (a command's answer was sent after its publication) sees the counter moved, so it
/// never answers with an older state than one already answered.
final class ReadCache: @unchecked Sendable {
    /// Moves after every carousel added to or removed from the directory.
    private let membership = Atomic<UInt64>(0)
    private let key = ThreadKey()
    /// Every thread's copies, so that they go with the cache.
    private let threads = Lock<[ThreadCopies]>([])

    /// Called after the directory added or removed a carousel.
    func membershipChanged() {
        membership.add(1, ordering: .releasing)
    }

    /// The response to a read of `resource` of the carousel `name` by a screen of `audience`;
    /// `reads` finds the reads the shared way when this thread has none (nil: no such carousel),
    /// and whether they are the audience's own (else the default's, docs/AUDIENCES.md).
    func response(
        carousel name: String, audience: String?, _ resource: PreparedReads.Resource, origin: String?,
        ifNoneMatch: String?, reads: (String, String?) -> (reads: PreparedReads, own: Bool)?
    ) -> PreparedResponse? {
        let membership = membership.load(ordering: .acquiring)
        return withThreadCopies { copies in
            if copies.membership != membership {
                copies.forget(at: membership)
            }
            let found =
                if let audience {
                    copies.carousel(named: name, audience: audience, reads: reads)
                } else {
                    copies.carousel(named: name) { reads($0, nil)?.reads }
                }
            return found?.response(resource, origin: origin, ifNoneMatch: ifNoneMatch)
        }
    }

    /// `body` with this thread's copies (made on its first read), not retained: `threads` holds them.
    private func withThreadCopies<Result>(_ body: (ThreadCopies) -> Result) -> Result {
        if let raw = key.value {
            return Unmanaged<ThreadCopies>.fromOpaque(raw)._withUnsafeGuaranteedRef(body)
        }
        let copies = ThreadCopies()
        threads.withLock { $0.append(copies) }
        key.set(Unmanaged.passUnretained(copies).toOpaque())
        return body(copies)
    }
}

/// One worker thread's copies; only that thread uses them.
private final class ThreadCopies {
    /// The directory's membership count these copies were made at.
    private(set) var membership: UInt64 = .max
    /// `default` apart: the bare v1 paths, the busiest, find it without hashing its name.
    private var defaultCarousel: CarouselCopies?
    private var carousels: [String: CarouselCopies] = [:]
    /// An audience's own copies, or the default's for an audience the banners do not name, keyed
    /// by both names at once (one hash a read). At most `audienceLimit`, as strangers choose names.
    private var audiences: [AudienceKey: CarouselCopies] = [:]
    private static let audienceLimit = 4096
    /// The audience copies this thread found last: screens of one audience poll again and again,
    /// and comparing two short names costs a fraction of hashing them.
    private var lastAudience: (key: AudienceKey, copies: CarouselCopies)?

    private struct AudienceKey: Hashable {
        let carousel: String
        let audience: String
    }

    func forget(at membership: UInt64) {
        self.membership = membership
        defaultCarousel = nil
        carousels.removeAll()
        audiences.removeAll()
        lastAudience = nil
    }

    func carousel(named name: String, audience: String, reads: (String, String?) -> (reads: PreparedReads, own: Bool)?)
        -> CarouselCopies?
    {
        let key = AudienceKey(carousel: name, audience: audience)
        if let last = lastAudience, last.key == key { return last.copies }
        let copies: CarouselCopies
        if let found = audiences[key] {
            copies = found
        } else {
            guard let (found, own) = reads(name, audience) else { return nil }
            copies = own ? CarouselCopies(found) : carousel(named: name) { _ in found }!
            if audiences.count == Self.audienceLimit { audiences.removeAll() }
            audiences[key] = copies
        }
        lastAudience = (key, copies)
        return copies
    }

    func carousel(named name: String, reads: (String) -> PreparedReads?) -> CarouselCopies? {
        let isDefault = name == CarouselDefinition.defaultName
        if let found = isDefault ? defaultCarousel : carousels[name] { return found }
        guard let reads = reads(name) else { return nil }
        let made = CarouselCopies(reads)
        if isDefault { defaultCarousel = made } else { carousels[name] = made }
        return made
    }
}

/// One carousel's responses as one thread queues them: copies of its reads' representations,
/// made on first need after each publication. Kept as three arrays rather than one of
/// `Representation`s, so that a read retains the one response it sends and nothing else.
private final class CarouselCopies {
    let reads: PreparedReads
    private var publication: UInt64 = .max
    /// By position (`PreparedReads.index(of:origin:)`).
    private var etags: [String]
    private var ok: [PreparedResponse?]
    private var notModified: [PreparedResponse?]

    init(_ reads: PreparedReads) {
        self.reads = reads
        etags = Array(repeating: "", count: reads.representationCount)
        ok = Array(repeating: nil, count: reads.representationCount)
        notModified = ok
    }

    func response(_ resource: PreparedReads.Resource, origin: String?, ifNoneMatch: String?) -> PreparedResponse {
        let index = reads.index(of: resource, origin: origin)
        if publication != reads.publication.load(ordering: .acquiring) || ok[index] == nil {
            copy(index)
        }
        if let ifNoneMatch, EntityTag.matches(ifNoneMatch, etags[index]) { return notModified[index]! }
        return ok[index]!
    }

    /// The representation at `index` copied from the reads' latest, the others forgotten when
    /// that is a later publication than theirs.
    private func copy(_ index: Int) {
        let (shared, publication) = reads.representation(at: index)
        if publication != self.publication {
            self.publication = publication
            for position in ok.indices {
                ok[position] = nil
                notModified[position] = nil
            }
        }
        let copy = shared.copy()
        etags[index] = copy.etag
        ok[index] = copy.ok
        notModified[index] = copy.notModified
    }
}
