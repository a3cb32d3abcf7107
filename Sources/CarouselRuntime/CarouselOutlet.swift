import Carousel
import Store

/// What the world outside the runtime makes of one carousel's states: for the HTTP adapter, its
/// pre-built read responses and its event stream (docs/ARCHITECTURE.md, "The runtime"). The runtime
/// feeds it and knows nothing of what it does with them.
public protocol CarouselOutlet: Sendable {
    /// Every new state, called inside the carousel's engine before the change that made it
    /// returns: a command's answer is never sent before its state is published.
    func publish(_ state: Carousel)
    /// The carousel is out of service (deleted, or the process is stopping): end what follows it.
    func close()
}

/// Makes each carousel's outlet when the carousel comes into service, and hears when the set of
/// carousels in service changes (the read path keeps per-thread copies of it).
public protocol CarouselOutlets: Sendable {
    associatedtype Outlet: CarouselOutlet
    /// The outlet of `carousel`, starting at `state`. `instance` tells this carousel apart from any
    /// other that was or will be served under its name, in this process or another sharing the
    /// store (the store's identity and the carousel's serial), for validators such as ETags.
    func outlet(for carousel: StoredCarousel, instance: String, state: Carousel) -> Outlet
    /// Called after a carousel was added to or removed from service.
    func membershipChanged()
}

/// Why a change to a carousel was not made. Nothing was written or published.
public enum ChangeError<Refusal: Error>: Error {
    /// The change itself was refused: a command the carousel's rules refuse, or an edit the
    /// caller's `revise` refused.
    case refused(Refusal)
    /// The caller's condition on the definition (`RevisionCondition`) did not hold for the
    /// definition as stored when the change was made; `current` is what is stored.
    case conditionFailed(current: StoredCarousel)
    /// The store did not do what it was asked (docs/STORE.md).
    case store(StoreError)
}

/// A condition on the definition a change applies to, checked on the definition as stored when
/// the change is made (inside the store's transaction): true when the change may go ahead. HTTP
/// makes one from `If-Match`.
public typealias RevisionCondition = @Sendable (_ revision: UInt64) -> Bool
