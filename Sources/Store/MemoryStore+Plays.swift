import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: PlayStore {
    public func record(_ batch: StatsBatch) throws(StoreError) {
        contents.withLock { contents in
            for play in batch.plays {
                contents.plays[play.key] = contents.plays[play.key].map { $0.merged(with: play) } ?? play
            }
            var counts = batch.engagement
            for view in batch.identifiedViews where contents.viewReports[view.key] == nil {
                contents.viewReports[view.key] = view.reportedAt
                counts.append(view.count)
            }
            for count in EngagementCount.added(counts) {
                var total = contents.engagement[count.key] ?? EngagementCount(count.key, views: 0, clicks: 0)
                total.views += count.views
                total.clicks += count.clicks
                contents.engagement[count.key] = total
            }
            if let cutoff = batch.forgetReportsBefore {
                contents.viewReports = contents.viewReports.filter { $0.value >= cutoff }
            }
        }
    }

    public func stats(of serial: Int64, audience: String?, from: Timestamp, to: Timestamp) throws(StoreError)
        -> StatsRecords
    {
        contents.withLock { contents in
            StatsRecords.select(
                plays: contents.plays.values, engagement: contents.engagement.values, of: serial, audience: audience,
                from: from, to: to)
        }
    }

    public func lastPlay(of serial: Int64, audience: String?) throws(StoreError) -> PlayRecord? {
        contents.withLock { contents in
            contents.plays.values.filter { $0.carousel == serial && $0.audience == audience }
                .max { $0.startedAt < $1.startedAt }
        }
    }
}
