/// Every way a client can change the carousel: an explicit value, so that commands can later be
/// persisted and replayed onto a `Carousel`.
public enum CarouselCommand: Sendable, Hashable {
    case next
    case previous
    case jump(to: Int)
    /// Stop auto-advancing; with a duration, only until then.
    case pause(for: Duration?)
    case resume
}

/// Why a command was refused. A refused command changes nothing.
public enum CarouselError: Error, Hashable {
    /// A move was asked of a carousel without banners.
    case noBanners
    /// `jump(to:)` named an index outside `0..<count`.
    case indexOutOfRange(index: Int, count: Int)
    /// A pause duration outside `Carousel.pauseDurations`.
    case pauseDurationOutOfRange(Duration)
}
