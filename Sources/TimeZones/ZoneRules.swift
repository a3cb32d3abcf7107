/// The UTC offsets of one IANA time zone through history: a table of transitions read from the
/// system's tzdata (TZif, RFC 8536) and, after its last entry, the POSIX rule of the file's footer
/// (`CET-1CEST,M3.5.0,M10.5.0/3`). Times are whole seconds since 1970-01-01T00:00:00Z; offsets are
/// seconds east of UTC. Pure values: loading the file is `ZoneDirectory`'s job.
///
/// Why not Foundation's `TimeZone`: FoundationEssentials has no named zones and full Foundation
/// brings ICU, ~7 MiB of resident memory for a service that otherwise needs ~15 MiB
/// (docs/SCHEDULES.md, "Time zones").
public struct ZoneRules: Sendable, CustomStringConvertible {
    /// The IANA name, `Europe/Berlin`.
    public var name: String { storage.name }
    /// When the offset changed, ascending.
    var transitions: [Int64] { storage.transitions }
    /// The offset from `transitions[i]` on.
    var offsets: [Int32] { storage.offsets }
    /// The offset before the first transition (or always, when there are none and no rule).
    var initialOffset: Int32 { storage.initialOffset }
    /// The offsets after the last transition.
    var rule: PosixRule? { storage.rule }

    /// Behind one reference: every carousel's definition and state holds its zone, most of them
    /// the same one (a pointer each rather than about 140 bytes, docs/PERFORMANCE.md).
    private let storage: Storage

    private final class Storage: Sendable {
        let name: String
        let transitions: [Int64]
        let offsets: [Int32]
        let initialOffset: Int32
        let rule: PosixRule?

        init(name: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixRule?) {
            self.name = name
            self.transitions = transitions
            self.offsets = offsets
            self.initialOffset = initialOffset
            self.rule = rule
        }
    }

    init(name: String, transitions: [Int64], offsets: [Int32], initialOffset: Int32, rule: PosixRule?) {
        precondition(transitions.count == offsets.count)
        storage = Storage(
            name: name, transitions: transitions, offsets: offsets, initialOffset: initialOffset, rule: rule)
    }

    /// UTC, which needs no tzdata: the default zone works on a system without any.
    public static let utc = ZoneRules(name: "UTC", transitions: [], offsets: [], initialOffset: 0, rule: nil)

    public var description: String { name }

    /// The offset in effect at `time`.
    public func offset(at time: Int64) -> Int32 {
        guard let first = transitions.first, time >= first else {
            return transitions.isEmpty ? (rule?.offset(at: time) ?? initialOffset) : initialOffset
        }
        let position = lastTransition(atOrBefore: time)
        if position == transitions.count - 1, let rule { return rule.offset(at: time) }
        return offsets[position]
    }

    /// The local wall-clock time at `time`, as seconds since 1970-01-01T00:00 local.
    public func localSeconds(at time: Int64) -> Int64 {
        time + Int64(offset(at: time))
    }

    /// The instant a local wall-clock time (seconds since 1970-01-01T00:00 local) names. A time
    /// that happens twice (clocks set back) names its first occurrence; a time that does not exist
    /// (clocks set forward past it) names the first instant after the gap, the moment of the change.
    public func instant(ofLocal local: Int64) -> Int64 {
        // Every offset that could apply near `local`: the one before, and those of nearby changes.
        // Offsets are within a day of UTC, so a margin of two days holds every instant `local` names.
        let margin: Int64 = 2 * 86_400
        guard let change = nextTransition(after: local - margin), change.at <= local + margin else {
            return local - Int64(offset(at: local - margin))  // the usual case: no change nearby
        }
        var candidates = [offset(at: local - margin)]
        var changes: [(at: Int64, before: Int32, after: Int32)] = []
        var cursor = local - margin
        while let next = nextTransition(after: cursor), next.at <= local + margin {
            changes.append((next.at, offset(at: next.at - 1), next.offset))
            candidates.append(next.offset)
            cursor = next.at
        }
        let valid = candidates.map { local - Int64($0) }.filter { localSeconds(at: $0) == local }
        if let earliest = valid.min() { return earliest }
        // In a gap: the change whose skipped wall-clock span [at + before, at + after) holds `local`.
        for change in changes where change.at + Int64(change.before) <= local && local < change.at + Int64(change.after)
        {
            return change.at
        }
        return local - Int64(candidates[0])  // unreachable for consistent data; never trap on a file
    }

    /// The first change of offset after `time`, with the offset it brings.
    func nextTransition(after time: Int64) -> (at: Int64, offset: Int32)? {
        if let last = transitions.last, time < last {
            let position = time < transitions[0] ? 0 : lastTransition(atOrBefore: time) + 1
            return (transitions[position], offsets[position])
        }
        return rule?.nextTransition(after: max(time, transitions.last ?? time))
    }

    /// The index of the last transition at or before `time`; `time` ≥ `transitions[0]`.
    private func lastTransition(atOrBefore time: Int64) -> Int {
        var low = 0
        var high = transitions.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if transitions[middle] <= time { low = middle } else { high = middle - 1 }
        }
        return low
    }
}

extension ZoneRules: Hashable {
    /// Zones are equal by name: one process loads a name from one tzdata.
    public static func == (lhs: ZoneRules, rhs: ZoneRules) -> Bool { lhs.name == rhs.name }
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }
}
