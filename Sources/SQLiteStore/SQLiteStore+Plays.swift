import CSQLite
import Carousel
import Definitions
import Glibc
import JSON
import Store
import Threading
import TimeZones

extension SQLiteStore: PlayStore {
    // MARK: Proof of play

    public func record(_ batch: StatsBatch) throws(StoreError) {
        guard !batch.isEmpty else { return }
        try on(commands) { connection throws(SQLiteError) in
            try connection.transaction { () throws(SQLiteError) in
                for play in batch.plays {
                    try connection.statement(
                        """
                        INSERT INTO plays (carousel, audience, started_at, banner, last_shown_at)
                        VALUES (?1, ?2, ?3, ?4, ?5)
                        ON CONFLICT (carousel, audience, started_at) DO UPDATE SET
                            last_shown_at = max(last_shown_at, excluded.last_shown_at)
                        """
                    ).bind(
                        .integer(play.carousel), .text(AudienceKeyColumn.text(play.audience)),
                        .integer(play.startedAt.nanosecondsSinceEpoch), .text(play.banner),
                        .integer(play.lastShownAt.nanosecondsSinceEpoch)
                    ).run()
                }
                var counts = batch.engagement
                // A view whose id is new here counts; a repeat inserts nothing and returns no row.
                for view in batch.identifiedViews {
                    let insert = try connection.statement(
                        """
                        INSERT INTO view_reports (carousel, id, reported_at) VALUES (?1, ?2, ?3)
                        ON CONFLICT (carousel, id) DO NOTHING RETURNING 1
                        """
                    ).bind(.integer(view.carousel), .text(view.id), .integer(view.reportedAt.nanosecondsSinceEpoch))
                    let inserted = try insert.step()
                    insert.reset()  // done with it: a statement left running would hold the commit back
                    if inserted {
                        counts.append(view.count)
                    }
                }
                if let cutoff = batch.forgetReportsBefore {
                    try connection.statement("DELETE FROM view_reports WHERE reported_at < ?1")
                        .bind(.integer(cutoff.nanosecondsSinceEpoch)).run()
                }
                for count in EngagementCount.added(counts) {
                    try connection.statement(
                        """
                        INSERT INTO engagement (carousel, audience, quarter, banner, views, clicks)
                        VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                        ON CONFLICT (carousel, audience, quarter, banner) DO UPDATE SET
                            views = views + excluded.views, clicks = clicks + excluded.clicks
                        """
                    ).bind(
                        .integer(count.carousel), .text(AudienceKeyColumn.text(count.audience)),
                        .integer(count.quarter),
                        .text(count.banner), .integer(count.views), .integer(count.clicks)
                    ).run()
                }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try on(admin) { connection throws(SQLiteError) in
            let plays = try Self.plays(
                connection.statement(
                    """
                    SELECT \(PlayRecord.columns) FROM plays
                    WHERE carousel = ?1 AND audience = ?2 AND last_shown_at >= ?3 AND started_at < ?4
                    ORDER BY started_at
                    """
                ).bind(
                    .integer(serial), .text(AudienceKeyColumn.text(audience)), .integer(from.nanosecondsSinceEpoch),
                    .integer(to.nanosecondsSinceEpoch)))
            let counts = try connection.statement(
                """
                SELECT carousel, banner, quarter, views, clicks FROM engagement
                WHERE carousel = ?1 AND audience = ?2 AND quarter * 1000000000 >= ?3 AND quarter * 1000000000 < ?4
                ORDER BY quarter, banner
                """
            ).bind(
                .integer(serial), .text(AudienceKeyColumn.text(audience)), .integer(from.nanosecondsSinceEpoch),
                .integer(to.nanosecondsSinceEpoch))
            var engagement: [EngagementCount] = []
            while try counts.step() {
                engagement.append(
                    EngagementCount(
                        carousel: counts.integer(0) ?? 0, audience: audience, banner: counts.text(1) ?? "",
                        quarter: counts.integer(2) ?? 0, views: counts.integer(3) ?? 0, clicks: counts.integer(4) ?? 0))
            }
            return StatsRecords(plays: plays, engagement: engagement)
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try on(admin) { connection throws(SQLiteError) in
            try Self.plays(
                connection.statement(
                    """
                    SELECT \(PlayRecord.columns) FROM plays
                    WHERE carousel = ?1 AND audience = ?2 ORDER BY started_at DESC LIMIT 1
                    """
                ).bind(.integer(serial), .text(AudienceKeyColumn.text(audience)))
            ).first
        }
    }

    /// The rows of a query of `carousel, audience, banner, started_at, last_shown_at`.
    static func plays(_ statement: SQLiteStatement) throws(SQLiteError) -> [PlayRecord] {
        var plays: [PlayRecord] = []
        while try statement.step() { plays.append(PlayRecord(row: statement)) }
        return plays
    }
}
