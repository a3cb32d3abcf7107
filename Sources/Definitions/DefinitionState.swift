import Carousel
import TimeZones

/// How a definition becomes a carousel's state, the one place every way in (the admin API,
/// seeding, `import`, loading a store) goes through.
extension CarouselDefinition {
    /// A new carousel of this definition: its first banner, playing from `now` when `autoplay`.
    public func newCarousel(at now: Timestamp) -> Carousel {
        Carousel(lineup: lineup, autoplay: autoplay, now: now)
    }

    /// The carousel of this definition where a stored `anchor` says.
    public func carousel(at anchor: CarouselAnchor) -> Carousel {
        Carousel(lineup: lineup, anchor: anchor)
    }

    /// `state`, the carousel of `old`, after an operator's edit to this definition at `now`
    /// (`Carousel.redefine`: the current banner kept when it survives; `autoplay` applied only
    /// when the edit changed it).
    public func redefine(_ state: inout Carousel, from old: CarouselDefinition, at now: Timestamp) {
        state.redefine(lineup, autoplay: autoplay == old.autoplay ? nil : autoplay, at: now)
    }
}
