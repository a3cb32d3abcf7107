import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: ScreenStore {
    // MARK: The fleet

    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        guard !sightings.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for sighting in sightings {
                    let carousel = SQLiteValue.integer(sighting.key.carousel)
                    let id = SQLiteValue.text(sighting.key.id.rawValue)
                    let claim = sighting.claim.map { SQLiteValue.text($0.digest) }
                    // `ScreenSighting.merged(into:timeout:)`, in SQL: another key's sighting changes nothing.
                    try connection.statement(
                        """
                        INSERT INTO screens (carousel, id, last_seen, heard_since, via, user_agent, audience, claim)
                        SELECT ?1, ?2, ?3, ?3, ?4, ?5, ?7, ?8 WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = ?1)
                        ON CONFLICT (carousel, id) DO UPDATE SET
                            claim = coalesce(claim, excluded.claim),
                            heard_since = CASE WHEN excluded.last_seen - last_seen > ?6
                                THEN excluded.last_seen ELSE heard_since END,
                            via = CASE WHEN excluded.last_seen >= last_seen THEN excluded.via ELSE via END,
                            user_agent = CASE WHEN excluded.last_seen >= last_seen
                                THEN excluded.user_agent ELSE user_agent END,
                            audience = CASE WHEN excluded.last_seen >= last_seen
                                THEN excluded.audience ELSE audience END,
                            last_seen = max(last_seen, excluded.last_seen)
                        WHERE claim IS NULL OR claim = excluded.claim
                        """
                    ).bind(
                        carousel, id, .integer(sighting.heardAt.nanosecondsSinceEpoch), .text(sighting.via.rawValue),
                        .text(sighting.userAgent), .integer(timeout.nanoseconds), sighting.audience.map { .text($0) },
                        claim
                    ).run()
                    guard let receipt = sighting.receipt else { continue }
                    try connection.statement(
                        """
                        UPDATE screens SET banner = ?3, version = ?4, shown_at = ?5, lateness = ?6,
                            verdict_since = CASE WHEN shown_at IS NOT NULL AND out_of_step IS ?7
                                THEN verdict_since ELSE ?8 END,
                            out_of_step = ?7, offset_ms = ?9, rtt_ms = ?10
                        WHERE carousel = ?1 AND id = ?2 AND (shown_at IS NULL OR shown_at <= ?5)
                            AND (claim IS NULL OR claim = ?11)
                        """
                    ).bind(
                        carousel, id, .text(receipt.banner), .integer(Int64(clamping: receipt.version)),
                        .integer(receipt.shownAt.nanosecondsSinceEpoch),
                        receipt.lateness.map { .integer($0.nanoseconds) },
                        receipt.outOfStep.map { .text($0.rawValue) },
                        .integer(receipt.verdictSince.nanosecondsSinceEpoch),
                        receipt.offsetMs.map { .integer($0) }, receipt.rttMs.map { .integer($0) }, claim
                    ).run()
                }
            }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        try on(admin) { connection throws(SQLiteError) in
            let rows = try connection.statement("SELECT \(ScreenRecord.columns) FROM screens")
            var screens: [ScreenRecord] = []
            while try rows.step() {
                if let screen = ScreenRecord(row: rows) {
                    screens.append(screen)
                }
            }
            return screens
        }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try on(commands) { connection throws(SQLiteError) in
            try connection.statement("DELETE FROM screens WHERE last_seen < ?1").bind(
                .integer(cutoff.nanosecondsSinceEpoch)
            ).run()
            return connection.changes
        }
    }

    public func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for key in keys {
                    try connection.statement("DELETE FROM screens WHERE carousel = ?1 AND id = ?2").bind(
                        .integer(key.carousel), .text(key.id.rawValue)
                    ).run()
                }
                try Self.append(audit, in: connection)
            }
        }
    }
}
