/// Every way a client can change the carousel: an explicit value, so that commands can later be
/// persisted and replayed onto a `Carousel`.
public enum CarouselCommand: Sendable, Hashable {
    case next
    case previous
    /// To the banner at `to` in the rotation of `audience`'s screens (nil: of those that declare
    /// none), in every audience that has it (docs/AUDIENCES.md).
    case jump(to: Int, audience: String? = nil)
    /// Stop auto-advancing; with a duration, only until then.
    case pause(for: Duration?)
    case resume
    /// Show `banner` on every screen now, for `duration` or until ended (docs/SCHEDULES.md).
    case startTakeover(banner: Banner, duration: Duration?)
    /// End the takeover, if any: the banner it replaced comes back with a full countdown.
    case endTakeover
}

/// Why a command was refused. A refused command changes nothing.
public enum CarouselError: Error, Hashable {
    /// A move was asked of a carousel without banners.
    case noBanners
    /// `jump(to:)` named an index outside `0..<count`.
    case indexOutOfRange(index: Int, count: Int)
    /// A pause duration outside `Carousel.pauseDurations`.
    case pauseDurationOutOfRange(Duration)
    /// A takeover duration outside `Carousel.pauseDurations`.
    case takeoverDurationOutOfRange(Duration)
    /// A move was asked while a takeover (of the banner with this id) holds every screen.
    case takeoverInProgress(bannerID: String)
}
