import Carousel
import TimeZones

/// What changed between two definitions, in words for a carousel's history (docs/HISTORY.md).
extension CarouselDefinition {
    /// `created with 3 banners` when there was none before; otherwise each change, in the
    /// order of the definition's fields: `interval 4.0 s → 6.0 s; banner 'sale' added`.
    public func summary(since previous: CarouselDefinition?) -> String {
        guard let previous else { return "created with \(banners.count) banner\(banners.count == 1 ? "" : "s")" }
        var changes: [String] = []
        if interval != previous.interval {
            changes.append("interval \(previous.interval.seconds) s → \(interval.seconds) s")
        }
        if autoplay != previous.autoplay { changes.append(autoplay ? "autoplay on" : "autoplay off") }
        if timeZone != previous.timeZone { changes.append("time zone \(previous.timeZone.name) → \(timeZone.name)") }
        if fallback != previous.fallback {
            changes.append("fallback \(Self.quoted(previous.fallback)) → \(Self.quoted(fallback))")
        }
        changes += Self.bannerChanges(from: previous.banners, to: banners)
        return changes.isEmpty ? "no change" : changes.joined(separator: "; ")
    }

    private static func quoted(_ id: String?) -> String { id.map { "'\($0)'" } ?? "none" }

    /// Banners added, removed, edited (naming the fields) and whether those kept changed order.
    private static func bannerChanges(from before: [Banner], to after: [Banner]) -> [String] {
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let new = Dictionary(after.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var changes: [String] = []
        for banner in after where old[banner.id] == nil { changes.append("banner '\(banner.id)' added") }
        for banner in before where new[banner.id] == nil { changes.append("banner '\(banner.id)' removed") }
        for banner in after {
            guard let previous = old[banner.id], previous != banner else { continue }
            changes.append(
                "banner '\(banner.id)' changed: \(fieldsChanged(from: previous, to: banner).joined(separator: ", "))")
        }
        let keptInOrder = after.map(\.id).filter { old[$0] != nil }
        if keptInOrder != before.map(\.id).filter({ new[$0] != nil }) { changes.append("banners reordered") }
        return changes
    }

    /// The names of the fields of a banner that differ, as the API spells them.
    private static func fieldsChanged(from old: Banner, to new: Banner) -> [String] {
        [
            ("image", old.image != new.image), ("caption", old.caption != new.caption),
            ("link", old.link != new.link), ("duration", old.duration != new.duration),
            ("schedule", old.schedule != new.schedule),
        ].filter(\.1).map(\.0)
    }
}
