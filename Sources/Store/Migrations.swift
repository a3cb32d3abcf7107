/// One step of a store's schema (docs/STORE.md, "Migrations"), known by its name: a store records
/// the names of the steps it has applied, in order, so that a step is found by what it is, not
/// by where it stands in a list. Each backend lists its steps (its SQL is its own); both lists
/// have the same names in the same order (`StoreTests` holds them to it). A released step is
/// never edited or renamed; a new one is appended.
public struct Migration: Sendable, Equatable {
    public let name: String
    public let sql: String

    public init(_ name: String, _ sql: String) {
        self.name = name
        self.sql = sql
    }
}

/// What a store needs of the steps this build knows, given what it has applied. Stores written
/// before steps were named recorded only how many they had applied (their schema version): the
/// first that many steps, in order, are theirs.
public enum MigrationPlan: Equatable, Sendable {
    /// Nothing to do.
    case current
    /// These steps, in this order.
    case apply([Migration])
    /// The store has applied steps this build does not know: a newer banner-server wrote it.
    case newer(unknown: [String])

    /// The plan for a store that has applied `applied` (names, oldest first) and says it is of
    /// schema version `version` (how many steps it has applied, which every build writes: a count
    /// above what this build knows is a newer build's, whatever the names say).
    public init(applied: [String], version: Int, known: [Migration]) {
        let names = Set(known.map(\.name))
        let unknown = applied.filter { !names.contains($0) }
        guard unknown.isEmpty && version <= known.count else {
            self = .newer(unknown: unknown)
            return
        }
        let done = Set(applied)
        let pending = known.filter { !done.contains($0.name) }
        self = pending.isEmpty ? .current : .apply(pending)
    }

    /// The names a store of schema version `version` (a count, from before steps were named) has
    /// applied; nil when it is more steps than this build knows.
    public static func applied(byVersion version: Int, known: [Migration]) -> [String]? {
        guard version <= known.count else { return nil }
        return known.prefix(max(version, 0)).map(\.name)
    }

    /// Why a store this build cannot use was refused: both versions (a count of steps, what
    /// older builds compare) and the steps unknown here, for an operator.
    public static func refusal(of store: String, version: Int, unknown: [String], known: [Migration]) -> StoreError {
        let steps = unknown.isEmpty ? "" : " (steps unknown here: \(unknown.joined(separator: ", ")))"
        return .unusable(
            "\(store) has schema version \(version), newer than this banner-server's \(known.count)\(steps): "
                + "run a banner-server at least as new as the one that wrote it, or give another --store")
    }
}
