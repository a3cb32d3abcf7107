import TimeZones

/// Which banners of a lineup are eligible at a time, and the first time after it when that may
/// change, kept per banner so that passing a boundary re-examines only the banners it concerns
/// (a year of daily windows on a hundred banners is tens of thousands of boundaries).
struct ScheduleCursor: Sendable {
    private(set) var eligible: [Bool]
    private var changesAt: [Timestamp?]
    /// The earliest of `changesAt`.
    private(set) var nextChange: Timestamp?

    init(_ lineup: Lineup, at time: Timestamp) {
        eligible = []
        changesAt = []
        for banner in lineup.banners {
            let status = banner.schedule.status(at: time, in: lineup.timeZone)
            eligible.append(status.eligible)
            changesAt.append(status.changesAt)
        }
        nextChange = changesAt.reduce(nil, earliest)
    }

    /// Brings every banner whose status may have changed by `time` up to `time`.
    mutating func update(_ lineup: Lineup, at time: Timestamp) {
        guard let nextChange, nextChange <= time else { return }
        for position in changesAt.indices {
            guard let due = changesAt[position], due <= time else { continue }
            let status = lineup.banners[position].schedule.status(at: time, in: lineup.timeZone)
            eligible[position] = status.eligible
            changesAt[position] = status.changesAt
        }
        self.nextChange = changesAt.reduce(nil, earliest)
    }

    /// The positions of `lineup`'s eligible banners for `audience` in list order
    /// (docs/AUDIENCES.md); its fallback alone when there are none.
    func rotation(of lineup: Lineup, for audience: String?) -> [Int] {
        let positions = eligible.indices.filter { eligible[$0] && lineup.banners[$0].isFor(audience) }
        guard positions.isEmpty else { return positions }
        return lineup.fallback.flatMap { id in lineup.banners.firstIndex { $0.id == id } }.map { [$0] } ?? []
    }
}

/// A value derived from the state and kept to save work. Equal whatever it holds, so that it never
/// makes two otherwise equal states differ.
struct Derived<Value: Sendable>: Sendable, Hashable {
    var value: Value

    static func == (lhs: Derived, rhs: Derived) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
