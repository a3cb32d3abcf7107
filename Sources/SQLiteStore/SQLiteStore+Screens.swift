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
                // Looked up once: the cache finds a statement by its text, which is long.
                let save = try connection.statement(Self.saveScreen)
                for sighting in sightings {
                    save.reset()
                    try save.bind(
                        [
                            .integer(sighting.key.carousel), .text(sighting.key.id.rawValue),
                            .integer(sighting.heardAt.nanosecondsSinceEpoch), .text(sighting.via.rawValue),
                            .text(sighting.userAgent), .integer(timeout.nanoseconds),
                            sighting.audience.map { .text($0) }, sighting.claim.map { .text($0.digest) },
                        ] + Self.values(of: sighting.receipt)
                    ).run()
                }
            }
        }
    }

    public func keepScreens(_ rows: [ScreenRecord]) throws(StoreError) {
        guard !rows.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                let keep = try connection.statement(
                    """
                    INSERT OR REPLACE INTO screens (\(ScreenRecord.columns))
                    SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16
                    WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = ?1)
                    """)
                for row in rows {
                    keep.reset()
                    try keep.bind(
                        [
                            .integer(row.carousel), .text(row.id.rawValue),
                            .integer(row.lastSeen.nanosecondsSinceEpoch),
                            .integer(row.heardSince.nanosecondsSinceEpoch), .text(row.via.rawValue),
                            .text(row.userAgent),
                        ] + Self.values(of: row.receipt) + [
                            row.audience.map { .text($0) }, row.claim.map { .text($0.digest) },
                        ]
                    ).run()
                }
            }
        }
    }

    /// A receipt's columns in the order both statements take them: banner, version, shown_at,
    /// lateness, out_of_step, verdict_since, offset_ms, rtt_ms (all NULL without one).
    private static func values(of receipt: JudgedReceipt?) -> [SQLiteValue?] {
        [
            receipt.map { .text($0.banner) }, receipt.map { .integer(Int64(clamping: $0.version)) },
            receipt.map { .integer($0.shownAt.nanosecondsSinceEpoch) },
            receipt?.lateness.map { .integer($0.nanoseconds) },
            receipt?.outOfStep.map { .text($0.rawValue) },
            receipt.map { .integer($0.verdictSince.nanosecondsSinceEpoch) },
            receipt?.offsetMs.map { .integer($0) }, receipt?.rttMs.map { .integer($0) },
        ]
    }

    /// `ScreenSighting.merged(into:timeout:)` in one statement: the screen's presence, then its
    /// receipt when it has one no older than the row's; a sighting with another key than the
    /// screen's claim changes nothing, and one of a carousel no longer stored adds nothing.
    private static let saveScreen = {
        let receiptTaken = "(excluded.shown_at IS NOT NULL AND (shown_at IS NULL OR shown_at <= excluded.shown_at))"
        let receiptColumns = ["banner", "version", "shown_at", "lateness", "out_of_step", "offset_ms", "rtt_ms"]
        return """
            INSERT INTO screens (carousel, id, last_seen, heard_since, via, user_agent, audience, claim,
                banner, version, shown_at, lateness, out_of_step, verdict_since, offset_ms, rtt_ms)
            SELECT ?1, ?2, ?3, ?3, ?4, ?5, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16
            WHERE EXISTS (SELECT 1 FROM carousels WHERE serial = ?1)
            ON CONFLICT (carousel, id) DO UPDATE SET
                claim = coalesce(claim, excluded.claim),
                heard_since = CASE WHEN excluded.last_seen - last_seen > ?6
                    THEN excluded.last_seen ELSE heard_since END,
                via = CASE WHEN excluded.last_seen >= last_seen THEN excluded.via ELSE via END,
                user_agent = CASE WHEN excluded.last_seen >= last_seen
                    THEN excluded.user_agent ELSE user_agent END,
                audience = CASE WHEN excluded.last_seen >= last_seen
                    THEN excluded.audience ELSE audience END,
                last_seen = max(last_seen, excluded.last_seen),
                verdict_since = CASE WHEN NOT \(receiptTaken) THEN verdict_since
                    WHEN shown_at IS NOT NULL AND out_of_step IS excluded.out_of_step THEN verdict_since
                    ELSE excluded.verdict_since END,
                \(receiptColumns.map { "\($0) = CASE WHEN \(receiptTaken) THEN excluded.\($0) ELSE \($0) END" }
                    .joined(separator: ",\n    "))
            WHERE claim IS NULL OR claim = excluded.claim
            """
    }()

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
