import Carousel
import Testing
import TimeZones

/// Weighted rotations (docs/WEIGHTS.md), checked against an independent computation of smooth
/// weighted round-robin and a model of the rules written here from the documentation.
@Suite("Weights")
struct WeightTests {
    /// nginx's own example of its smooth weighted round-robin: weights 5, 1, 1 give a a b a c a a.
    @Test func theCycleIsSmoothWeightedRoundRobin() {
        var carousel = weighted([("a", 5), ("b", 1), ("c", 1)])
        var shown: [String] = []
        for second in 0..<21 {
            carousel.advance(to: at(Double(second)))
            shown.append(carousel.currentBanner!.id)
        }
        #expect(shown == Array(repeating: ["a", "a", "b", "a", "c", "a", "a"], count: 3).flatMap { $0 })
        #expect(carousel.version == 21, "every turn is an advance, a banner's second turn in a row included")
        #expect(carousel.count == 3)
        #expect(carousel.shares.map { $0.map { ($0 * 7).rounded() } } == [5, 1, 1])
    }

    /// Stats plan airtime: a banner's weight times its duration over the rotation's.
    @Test func theAirtimeShareCountsDurations() {
        let lineup = Lineup(
            banners: [
                Banner(id: "a", image: "https://cdn.example.com/a.png", weight: 5),
                Banner(id: "b", image: "https://cdn.example.com/b.png"),
                Banner(id: "c", image: "https://cdn.example.com/c.png", duration: .seconds(2)),
                Banner(id: "off", image: "https://cdn.example.com/off.png", schedule: Schedule(enabled: false)),
            ], interval: .seconds(1))
        let carousel = Carousel(lineup: lineup, now: at(0))
        let airtime: [Double?] = [0.625, 0.125, 0.25, nil]
        let turns: [Double?] = [5.0 / 7.0, 1.0 / 7.0, 1.0 / 7.0, nil]
        #expect(carousel.airtimeShares == airtime)
        #expect(carousel.shares == turns, "turns: the weights alone")
    }

    @Test(arguments: [
        [3, 1], [1, 2, 3], [7, 3, 1, 2], [100, 1], [1, 100, 1], [2, 4, 6], [13, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2],
    ])
    func everyTurnMatchesAnIndependentComputation(_ weights: [Int]) {
        let members = weights.enumerated().map { ("b\($0.offset)", $0.element) }
        let cycle = referenceCycle(members)
        #expect(cycle.count == weights.reduce(0, +))
        for (offset, member) in members.enumerated() {
            #expect(cycle.filter { $0 == member.0 }.count == weights[offset], "each banner gets its weight in turns")
        }
        var carousel = weighted(members)
        for turn in 0..<(3 * cycle.count) {
            carousel.advance(to: at(Double(turn)))
            #expect(carousel.currentBanner?.id == cycle[turn % cycle.count], "turn \(turn)")
            #expect(carousel.nextBanner?.id == cycle[(turn + 1) % cycle.count], "the next turn's banner, turn \(turn)")
        }
    }

    /// Equal weights are the unweighted rotation: the same banners, turns and versions.
    @Test func equalWeightsPlayLikeNoWeights() {
        var plain = weighted([("a", 1), ("b", 1), ("c", 1)])
        var doubled = weighted([("a", 4), ("b", 4), ("c", 4)])
        for second in [0.0, 1, 2, 3, 7, 100, 1000.5] {
            plain.advance(to: at(second))
            doubled.advance(to: at(second))
            #expect(doubled.currentBanner == plain.currentBanner.map { weightedCopy($0, 4) })
            #expect(doubled.version == plain.version)
            #expect(doubled.index == plain.index)
        }
    }

    /// Schedules decide who rotates; each change of the rotation spreads the weights anew (the
    /// banner shown keeps being shown, at its first turn of the new cycle).
    @Test func weightsReSpreadWhenSchedulesChangeTheRotation() {
        let plan: [ModelBanner] = [
            ModelBanner(id: "a", weight: 3),
            ModelBanner(id: "b", weight: 1, leaves: 20.5),
            ModelBanner(id: "c", weight: 2, joins: 10.5),
            ModelBanner(id: "d", weight: 5, joins: 30.25, leaves: 41.75),
        ]
        let lineup = Lineup(
            banners: plan.map { member in
                Banner(
                    id: member.id, image: "https://cdn.example.com/\(member.id).png",
                    schedule: Schedule(startsAt: member.joins.map(at), endsAt: member.leaves.map(at)),
                    weight: member.weight)
            }, interval: .seconds(1))
        var carousel = Carousel(lineup: lineup, now: at(0))
        let expected = modelShows(plan, until: 60)
        #expect(expected.count > 60, "the model steps through the minute")
        for (time, id) in expected {
            carousel.advance(to: at(time) + .nanoseconds(-1))
            carousel.advance(to: at(time))
            #expect(carousel.currentBanner?.id == id, "at \(time) s")
        }
        // A stall caught up at once ends where the steps did.
        var stalled = Carousel(lineup: lineup, now: at(0))
        stalled.advance(to: at(60))
        #expect(stalled == carousel)
    }

    /// Next and previous go to the nearest turn of another banner, so what screens show changes;
    /// a jump goes to the banner's first turn.
    @Test func commandsMoveToAnotherBanner() throws {
        var carousel = weighted([("a", 5), ("b", 1), ("c", 1)])  // a a b a c a a
        try carousel.apply(.next, at: at(0.5))
        #expect(carousel.currentBanner?.id == "b")
        #expect(carousel.anchor.turn == 2)
        try carousel.apply(.next, at: at(0.6))
        #expect(carousel.anchor.turn == 3)
        try carousel.apply(.previous, at: at(0.7))
        #expect(carousel.anchor.turn == 2)
        try carousel.apply(.previous, at: at(0.8))
        #expect(carousel.anchor.turn == 1, "back to a, the nearest turn of another banner")
        try carousel.apply(.jump(to: 2), at: at(0.9))
        #expect(carousel.anchor.turn == 4)
        #expect(carousel.currentBanner?.id == "c")
        try carousel.apply(.previous, at: at(1))
        #expect(carousel.anchor.turn == 3)
    }

    /// The turn is part of the anchor, so a replica or a restart continues the same cycle.
    @Test func theTurnSurvivesTheAnchor() {
        let members = [("a", 5), ("b", 1), ("c", 1)]
        var carousel = weighted(members)
        carousel.advance(to: at(5))  // turn 5: a's fourth turn
        let restored = Carousel(lineup: carousel.lineup, anchor: carousel.anchor)
        #expect(restored == carousel)
        var later = restored
        later.advance(to: at(6))
        #expect(later.anchor.turn == 6)
        // An anchor without a turn (written before weights) starts at the banner's first turn.
        var old = carousel.anchor
        old.turn = nil
        #expect(Carousel(lineup: carousel.lineup, anchor: old).anchor.turn == 0)
        // A turn that no longer shows the anchor's banner gives way to its first turn.
        old.turn = 2
        #expect(Carousel(lineup: carousel.lineup, anchor: old).anchor.turn == 0)
    }

    @Test func anEditKeepsTheTurnUnlessTheCycleChanges() {
        var carousel = weighted([("a", 5), ("b", 1), ("c", 1)])
        carousel.advance(to: at(3))  // turn 3
        var captioned = carousel.lineup
        captioned.banners[1].caption = "new"
        carousel.redefine(captioned, autoplay: nil, at: at(3.5))
        #expect(carousel.anchor.turn == 3)
        #expect(carousel.nextAdvanceAt == at(4), "countdown untouched")
        var reweighted = carousel.lineup
        reweighted.banners[2].weight = 3  // a 5, b 1, c 3
        carousel.redefine(reweighted, autoplay: nil, at: at(3.6))
        let cycle = referenceCycle([("a", 5), ("b", 1), ("c", 3)])
        #expect(carousel.anchor.turn == cycle.firstIndex(of: "a"))
        #expect(carousel.nextAdvanceAt == at(4), "the banner shown stays, countdown untouched")
        carousel.advance(to: at(4))
        #expect(carousel.currentBanner?.id == cycle[1])
    }

    // MARK: The independent computation

    /// Smooth weighted round-robin as docs/WEIGHTS.md states it, by id.
    private func referenceCycle(_ members: [(String, Int)]) -> [String] {
        let total = members.reduce(0) { $0 + $1.1 }
        var running: [String: Int] = [:]
        var cycle: [String] = []
        for _ in 0..<total {
            for (id, weight) in members { running[id, default: 0] += weight }
            let top = members.map { running[$0.0]! }.max()!
            let chosen = members.first { running[$0.0]! == top }!.0
            running[chosen]! -= total
            cycle.append(chosen)
        }
        return cycle
    }

    struct ModelBanner {
        var id: String
        var weight: Int
        var joins: Double? = nil
        var leaves: Double? = nil

        func rotates(at time: Double) -> Bool {
            (joins.map { $0 <= time } ?? true) && (leaves.map { time < $0 } ?? true)
        }
    }

    /// What the rules say screens show, each change as (seconds from t0, id), for an interval of
    /// 1 s, playing from t0; boundaries never fall on an advance here.
    private func modelShows(_ plan: [ModelBanner], until end: Double) -> [(Double, String)] {
        func cycle(at time: Double) -> [String] {
            referenceCycle(plan.filter { $0.rotates(at: time) }.map { ($0.id, $0.weight) })
        }
        let boundaries = plan.flatMap { [$0.joins, $0.leaves].compactMap { $0 } }.sorted()
        var turns = cycle(at: 0)
        var turn = 0
        var since = 0.0
        var now = 0.0
        var shows: [(Double, String)] = []
        while true {
            let advance = since + 1
            let boundary = boundaries.first { $0 > now && $0 < advance }
            let time = boundary ?? advance
            guard time <= end else { return shows }
            now = time
            if let boundary {
                let shown = turns[turn]
                let newTurns = cycle(at: boundary)
                if newTurns.contains(shown) {
                    turn = newTurns.firstIndex(of: shown)!
                } else {
                    // The next banner in list order that rotates, with a full countdown.
                    let listed = plan.firstIndex { $0.id == shown }!
                    let successor = (1...plan.count).map { plan[(listed + $0) % plan.count].id }.first {
                        newTurns.contains($0)
                    }!
                    turn = newTurns.firstIndex(of: successor)!
                    since = boundary
                }
                turns = newTurns
            } else {
                turn = (turn + 1) % turns.count
                since = advance
            }
            shows.append((time, turns[turn]))
        }
    }

    private func weighted(_ members: [(String, Int)]) -> Carousel {
        let lineup = Lineup(
            banners: members.map { Banner(id: $0.0, image: "https://cdn.example.com/\($0.0).png", weight: $0.1) },
            interval: .seconds(1))
        return Carousel(lineup: lineup, now: at(0))
    }

    private func weightedCopy(_ banner: Banner, _ weight: Int) -> Banner {
        var copy = banner
        copy.weight = weight
        return copy
    }
}
