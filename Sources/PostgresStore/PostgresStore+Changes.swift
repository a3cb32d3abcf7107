import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore {
    public func observeChanges(_ onChange: @escaping @Sendable (StoreChange) -> Void) {
        listener.start { [status, admin, commands] event in
            switch event {
            case .reachable:
                status.withLock { $0.unreachable = nil }
                // Back: the next write connects at once rather than wait out its pause.
                for slot in [admin, commands] { slot.withLock { $0.lastFailure = nil } }
                onChange(.everything)
            case .unreachable(let reason):
                status.withLock { $0.unreachable = reason }
                onChange(.unreachable(reason))
            case .changed(let payload):
                onChange(Self.change(from: payload))
            }
        }
    }

    public func close() {
        listener.stop()
        admin.withLock { $0.connection = nil }
        commands.withLock { $0.connection = nil }
    }

    /// A notification's payload as a change: `name`, or `name serial revision position
    /// playing_since paused_until version changed_at turn` (see `note`).
    static func change(from payload: String) -> StoreChange {
        if payload == tokensPayload { return .tokens }
        if payload == pendingPayload { return .pending }
        let fields = payload.split(separator: " ").map(String.init)
        guard fields.count == 9, let serial = Int64(fields[1]), let revision = UInt64(fields[2]),
            let version = Int64(fields[6]), let changedAt = Int64(fields[7])
        else { return .carousel(name: fields.first ?? payload) }
        let integer = { (text: String) in text == "-" ? nil : Int64(text) }
        let anchor = AnchorColumns(
            position: integer(fields[3]), playingSince: integer(fields[4]), pausedUntil: integer(fields[5]),
            version: version, changedAt: changedAt, takeover: nil, turn: integer(fields[8]), audiences: nil
        ).anchor
        return .carousel(name: fields[0], note: ChangeNote(serial: serial, revision: revision, anchor: anchor))
    }
}
