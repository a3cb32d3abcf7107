import TimeZones

/// A screen's report that it showed `banner` from `shownAt` on (on the service's clock as the
/// screen estimates it), in the state of `version` (docs/SCREENS.md, receipts).
public struct Receipt: Sendable, Equatable {
    public let banner: String
    public let version: UInt64
    public let shownAt: Timestamp

    public init(banner: String, version: UInt64, shownAt: Timestamp) {
        self.banner = banner
        self.version = version
        self.shownAt = shownAt
    }
}

/// What a receipt says of its screen, against what the carousel showed.
public enum StepVerdict: Sendable, Equatable {
    /// The banner the carousel showed, flipped to within the tolerance; `lateness` is negative
    /// for a flip a little before the carousel's.
    case inStep(lateness: Duration)
    /// The banner the carousel showed, flipped to `by` after the carousel did (more than the tolerance).
    case late(by: Duration)
    /// The banner the carousel showed next, flipped to `by` before the carousel did.
    case early(by: Duration)
    /// Neither the banner shown then nor the next one; `expected` is what was shown then.
    case wrongBanner(expected: String?)
    /// The instant is before what the history knows (the process started after it).
    case unknown
}

extension ShowHistory {
    /// Checks `receipt` against what was shown at its instant to screens of `audience`: the same
    /// banner, flipped within `tolerance` of the carousel's change to it (either side), is in step.
    public func check(_ receipt: Receipt, tolerance: Duration, audience: String? = nil) -> StepVerdict {
        verdict(
            of: receipt, shown: shown(at: receipt.shownAt, audience: audience), tolerance: tolerance, audience: audience
        )
    }

    /// `check`, with what was shown remembered for the next receipts of the same flip.
    public mutating func checkRemembering(_ receipt: Receipt, tolerance: Duration, audience: String? = nil)
        -> StepVerdict
    {
        let shown = shownRemembering(at: receipt.shownAt, audience: audience)
        return verdict(of: receipt, shown: shown, tolerance: tolerance, audience: audience)
    }

    private func verdict(of receipt: Receipt, shown: Shown?, tolerance: Duration, audience: String?) -> StepVerdict {
        guard let shown else { return .unknown }
        if shown.banner?.id == receipt.banner {
            let lateness = receipt.shownAt - shown.since
            return lateness <= tolerance ? .inStep(lateness: lateness) : .late(by: lateness)
        }
        // Flipped before the carousel: the next banner shown is this one. One change ahead only; a
        // screen two changes ahead shows the wrong banner.
        if let next = transitions(
            after: receipt.shownAt, through: receipt.shownAt + span, limit: 1, audience: audience
        ).first,
            next.banner?.id == receipt.banner
        {
            let earliness = next.at - receipt.shownAt
            return earliness <= tolerance ? .inStep(lateness: .zero - earliness) : .early(by: earliness)
        }
        return .wrongBanner(expected: shown.banner?.id)
    }

    /// True when the carousel changed what screens of `audience` show twice after a screen's
    /// latest receipt (`lastShownAt`) and no receipt came: the screen is not flipping. Changes in
    /// the last `grace` before `now` do not count yet: receipts come in batches, a few seconds late.
    public func isFrozen(lastShownAt: Timestamp, now: Timestamp, grace: Duration, audience: String? = nil) -> Bool {
        transitions(after: lastShownAt, through: now - grace, limit: 2, audience: audience).count == 2
    }

    /// `isFrozen` for many screens of `audience` at once, whose latest receipts are all at
    /// `earliest` or after: one walk over the changes, where asking screen by screen walks again
    /// each time. The walk goes on to `through` (at least `now - grace`; later instants are what
    /// the carousel will show unless the history moves), so that it also tells when a screen not
    /// frozen yet will be (`FrozenCheck.frozenFrom`).
    public func frozenCheck(
        earliest: Timestamp, through: Timestamp, grace: Duration, audience: String? = nil
    ) -> FrozenCheck {
        let (found, complete) = walk(
            after: earliest, through: through, limit: FrozenCheck.changesWalked, audience: audience)
        return FrozenCheck(
            earliest: earliest, through: through, grace: grace, changes: found.map(\.at), complete: complete)
    }
}

/// The carousel's changes for the screens of one audience after an instant
/// (`ShowHistory.frozenCheck`), to tell screen after screen whether it is frozen, and from when,
/// with a binary search.
public struct FrozenCheck: Sendable {
    /// A bound on one walk; screens it leaves undecided are asked of the history one by one.
    static let changesWalked = 1000

    let earliest: Timestamp
    let through: Timestamp
    let grace: Duration
    /// After `earliest`, oldest first: every change through `through` when `complete`, else the first ones.
    let changes: [Timestamp]
    let complete: Bool

    /// From when a screen whose latest receipt is at `lastShownAt`, and that sends none, is
    /// frozen, as long as the history does not move.
    public enum Onset: Sendable, Equatable {
        /// From this instant on (the carousel's second change after the receipt, plus the grace).
        case at(Timestamp)
        /// Not at this instant or before; the walk does not tell when after.
        case after(Timestamp)
    }

    /// When a screen whose latest receipt is at `lastShownAt` is frozen from; nil when the changes
    /// walked do not tell (before `earliest`, or past a walk cut short).
    public func frozenFrom(lastShownAt: Timestamp) -> Onset? {
        guard lastShownAt >= earliest else { return nil }
        // The first change after lastShownAt.
        var (low, high) = (0, changes.count)
        while low < high {
            let middle = (low + high) / 2
            if changes[middle] <= lastShownAt { low = middle + 1 } else { high = middle }
        }
        if changes.count - low >= 2 { return .at(changes[low + 1] + grace) }
        return complete ? .after(through + grace) : nil
    }
}
