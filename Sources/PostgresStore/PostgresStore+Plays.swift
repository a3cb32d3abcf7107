import CPostgres
import Carousel
import Definitions
import Glibc
import Store
import Threading
import TimeZones

extension PostgresStore: PlayStore {
    // MARK: Proof of play

    public func record(_ batch: StatsBatch) throws(StoreError) {
        guard !batch.isEmpty else { return }
        // Rows in one order on every replica: two flushes of the same rows wait for each other
        // rather than deadlock.
        let plays = batch.plays.sorted {
            ($0.carousel, AudienceKeyColumn.text($0.audience), $0.startedAt) < (
                $1.carousel, AudienceKeyColumn.text($1.audience), $1.startedAt
            )
        }
        let identifiedViews = batch.identifiedViews.sorted { ($0.carousel, $0.id) < ($1.carousel, $1.id) }
        try on(commands) { connection throws(PostgresError) in
            try Self.transaction(connection) { () throws(PostgresError) in
                // A view whose id is new counts; a repeat (from any replica: the insert waits for
                // another transaction inserting the same id) inserts nothing and returns no row.
                var counts = batch.engagement
                for view in identifiedViews {
                    let inserted = try connection.execute(
                        """
                        INSERT INTO view_reports (carousel, id, reported_at) VALUES ($1, $2, $3)
                        ON CONFLICT (carousel, id) DO NOTHING RETURNING 1
                        """, [String(view.carousel), view.id, String(view.reportedAt.nanosecondsSinceEpoch)])
                    if !inserted.isEmpty {
                        counts.append(view.count)
                    }
                }
                if let cutoff = batch.forgetReportsBefore {
                    _ = try connection.execute(
                        "DELETE FROM view_reports WHERE reported_at < $1", [String(cutoff.nanosecondsSinceEpoch)])
                }
                let engagement = EngagementCount.added(counts).sorted {
                    ($0.carousel, AudienceKeyColumn.text($0.audience), $0.quarter, $0.banner)
                        < ($1.carousel, AudienceKeyColumn.text($1.audience), $1.quarter, $1.banner)
                }
                for play in plays {
                    try connection.execute(
                        """
                        INSERT INTO plays (carousel, audience, started_at, banner, last_shown_at)
                        VALUES ($1, $2, $3, $4, $5)
                        ON CONFLICT (carousel, audience, started_at) DO UPDATE SET
                            last_shown_at = GREATEST(plays.last_shown_at, excluded.last_shown_at)
                        """,
                        [
                            String(play.carousel), AudienceKeyColumn.text(play.audience),
                            String(play.startedAt.nanosecondsSinceEpoch),
                            play.banner, String(play.lastShownAt.nanosecondsSinceEpoch),
                        ])
                }
                for count in engagement {
                    try connection.execute(
                        """
                        INSERT INTO engagement (carousel, audience, quarter, banner, views, clicks)
                        VALUES ($1, $2, $3, $4, $5, $6)
                        ON CONFLICT (carousel, audience, quarter, banner) DO UPDATE SET
                            views = engagement.views + excluded.views, clicks = engagement.clicks + excluded.clicks
                        """,
                        [
                            String(count.carousel), AudienceKeyColumn.text(count.audience), String(count.quarter),
                            count.banner,
                            String(count.views), String(count.clicks),
                        ])
                }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        try on(admin) { connection throws(PostgresError) in
            let span = [
                String(serial), AudienceKeyColumn.text(audience), String(from.nanosecondsSinceEpoch),
                String(to.nanosecondsSinceEpoch),
            ]
            let plays = try connection.execute(
                """
                SELECT \(PlayRecord.columns) FROM plays
                WHERE carousel = $1 AND audience = $2 AND last_shown_at >= $3 AND started_at < $4
                ORDER BY started_at
                """, span)
            let counts = try connection.execute(
                """
                SELECT carousel, banner, quarter, views, clicks FROM engagement
                WHERE carousel = $1 AND audience = $2 AND quarter * 1000000000 >= $3 AND quarter * 1000000000 < $4
                ORDER BY quarter, banner
                """, span)
            return StatsRecords(
                plays: plays.map(Self.play),
                engagement: counts.map { row in
                    let integer = { (column: Int) in row[column].flatMap { Int64($0) } ?? 0 }
                    return EngagementCount(
                        carousel: integer(0), audience: audience, banner: row[1] ?? "", quarter: integer(2),
                        views: integer(3), clicks: integer(4))
                })
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        try on(admin) { connection throws(PostgresError) in
            try connection.execute(
                """
                SELECT \(PlayRecord.columns) FROM plays
                WHERE carousel = $1 AND audience = $2 ORDER BY started_at DESC LIMIT 1
                """, [String(serial), AudienceKeyColumn.text(audience)]
            ).first.map(Self.play)
        }
    }

    /// A row of `carousel, audience, banner, started_at, last_shown_at`.
    static func play(_ row: [String?]) -> PlayRecord { PlayRecord(row: PostgresRow(row)) }
}
