import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: ScreenStore {
    // MARK: The fleet

    public func saveScreens(_ sightings: [ScreenSighting], timeout: Duration) throws(StoreError) {
        guard !sightings.isEmpty else { return }
        // Rows in one order on every replica: two replicas' batches wait for each other rather
        // than deadlock.
        let sightings = sightings.sorted {
            ($0.key.carousel, $0.key.id.rawValue) < ($1.key.carousel, $1.key.id.rawValue)
        }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                for sighting in sightings {
                    let key = [String(sighting.key.carousel), sighting.key.id.rawValue]
                    // `ScreenSighting.merged(into:timeout:)`, in SQL: another key's sighting changes nothing.
                    try connection.execute(
                        """
                        INSERT INTO screens AS old (carousel, id, last_seen, heard_since, via, user_agent, audience, claim)
                        SELECT $1, $2, $3, $3, $4, $5, $7, $8 WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = $1)
                        ON CONFLICT (carousel, id) DO UPDATE SET
                            claim = COALESCE(old.claim, excluded.claim),
                            heard_since = CASE WHEN excluded.last_seen - old.last_seen > $6
                                THEN excluded.last_seen ELSE old.heard_since END,
                            via = CASE WHEN excluded.last_seen >= old.last_seen THEN excluded.via ELSE old.via END,
                            user_agent = CASE WHEN excluded.last_seen >= old.last_seen
                                THEN excluded.user_agent ELSE old.user_agent END,
                            audience = CASE WHEN excluded.last_seen >= old.last_seen
                                THEN excluded.audience ELSE old.audience END,
                            last_seen = GREATEST(old.last_seen, excluded.last_seen)
                        WHERE old.claim IS NULL OR old.claim = excluded.claim
                        """,
                        key + [
                            String(sighting.heardAt.nanosecondsSinceEpoch), sighting.via.rawValue, sighting.userAgent,
                            String(timeout.nanoseconds), sighting.audience, sighting.claim?.digest,
                        ])
                    guard let receipt = sighting.receipt else { continue }
                    try connection.execute(
                        """
                        UPDATE screens SET banner = $3, version = $4, shown_at = $5, lateness = $6,
                            verdict_since = CASE WHEN shown_at IS NOT NULL AND out_of_step IS NOT DISTINCT FROM $7
                                THEN verdict_since ELSE $8 END,
                            out_of_step = $7, offset_ms = $9, rtt_ms = $10
                        WHERE carousel = $1 AND id = $2 AND (shown_at IS NULL OR shown_at <= $5)
                            AND (claim IS NULL OR claim = $11)
                        """,
                        key + [
                            receipt.banner, String(receipt.version), String(receipt.shownAt.nanosecondsSinceEpoch),
                            receipt.lateness.map { String($0.nanoseconds) }, receipt.outOfStep?.rawValue,
                            String(receipt.verdictSince.nanosecondsSinceEpoch), receipt.offsetMs.map { String($0) },
                            receipt.rttMs.map { String($0) }, sighting.claim?.digest,
                        ])
                }
            }
        }
    }

    public func keepScreens(_ rows: [ScreenRecord]) throws(StoreError) {
        guard !rows.isEmpty else { return }
        let rows = rows.sorted { ($0.carousel, $0.id.rawValue) < ($1.carousel, $1.id.rawValue) }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                for row in rows {
                    let receipt = row.receipt
                    try connection.execute(
                        """
                        INSERT INTO screens (\(ScreenRecord.columns))
                        SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16
                        WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = $1)
                        ON CONFLICT (carousel, id) DO UPDATE SET
                            last_seen = excluded.last_seen, heard_since = excluded.heard_since, via = excluded.via,
                            user_agent = excluded.user_agent, banner = excluded.banner, version = excluded.version,
                            shown_at = excluded.shown_at, lateness = excluded.lateness,
                            out_of_step = excluded.out_of_step, verdict_since = excluded.verdict_since,
                            offset_ms = excluded.offset_ms, rtt_ms = excluded.rtt_ms, audience = excluded.audience,
                            claim = excluded.claim
                        """,
                        [
                            String(row.carousel), row.id.rawValue, String(row.lastSeen.nanosecondsSinceEpoch),
                            String(row.heardSince.nanosecondsSinceEpoch), row.via.rawValue, row.userAgent,
                            receipt?.banner, receipt.map { String($0.version) },
                            receipt.map { String($0.shownAt.nanosecondsSinceEpoch) },
                            receipt?.lateness.map { String($0.nanoseconds) }, receipt?.outOfStep?.rawValue,
                            receipt.map { String($0.verdictSince.nanosecondsSinceEpoch) },
                            receipt?.offsetMs.map { String($0) }, receipt?.rttMs.map { String($0) }, row.audience,
                            row.claim?.digest,
                        ])
                }
            }
        }
    }

    public func screens() throws(StoreError) -> [ScreenRecord] {
        try on(admin) { connection throws(PostgresError) in
            try connection.execute("SELECT \(ScreenRecord.columns) FROM screens").compactMap { row in
                ScreenRecord(row: PostgresRow(row))
            }
        }
    }

    public func forgetScreens(silentSince cutoff: Timestamp) throws(StoreError) -> Int {
        try on(commands) { connection throws(PostgresError) in
            try connection.execute(
                "DELETE FROM screens WHERE last_seen < $1 RETURNING 1", [String(cutoff.nanosecondsSinceEpoch)]
            ).count
        }
    }

    public func forgetScreens(_ keys: [ScreenRecord.Key], audit: [AuditEntry]) throws(StoreError) {
        guard !keys.isEmpty else { return }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                for key in keys {
                    try connection.execute(
                        "DELETE FROM screens WHERE carousel = $1 AND id = $2", [String(key.carousel), key.id.rawValue])
                }
                try Self.append(audit, on: connection)
            }
        }
    }
}
