import Carousel
import Foundation
import Store
import Testing
import TimeZones

@testable import BannerAPI

/// Buckets of the carousel's time zone, and what falls in each (docs/STATS.md).
@Suite("Stats report")
struct StatsReportTests {
    static let berlin = try! ZoneDirectory.system.rules(named: "Europe/Berlin")
    static let kolkata = try! ZoneDirectory.system.rules(named: "Asia/Kolkata")

    static func time(_ text: String) -> Timestamp { Timestamp(rfc3339: text)! }

    @Test func hoursAndDaysFollowTheZonesWallClock() {
        // Kolkata is 5:30 ahead: its hours start at half past in UTC, its days at 18:30.
        let (from, to) = StatsReport.span(
            from: Self.time("2026-12-01T10:10:00Z"), to: Self.time("2026-12-01T12:29:00Z"), bucket: .hour,
            zone: Self.kolkata)
        #expect(from == Self.time("2026-12-01T09:30:00Z") && to == Self.time("2026-12-01T12:30:00Z"))
        #expect(
            StatsReport.boundaries(from: from, to: to, bucket: .hour, zone: Self.kolkata).map(\.rfc3339) == [
                "2026-12-01T09:30:00.000Z", "2026-12-01T10:30:00.000Z", "2026-12-01T11:30:00.000Z",
                "2026-12-01T12:30:00.000Z",
            ])
        let days = StatsReport.span(
            from: Self.time("2026-12-01T10:00:00Z"), to: Self.time("2026-12-02T10:00:00Z"), bucket: .day,
            zone: Self.kolkata)
        #expect(days.0 == Self.time("2026-11-30T18:30:00Z") && days.1 == Self.time("2026-12-02T18:30:00Z"))
    }

    @Test func aDayOfChangedClocksIsTwentyThreeOrTwentyFiveHours() {
        // Berlin: clocks forward on 2026-03-29 at 02:00 (an hour skipped), back on 2026-10-25 at 03:00.
        let spring = StatsReport.boundaries(
            from: Self.time("2026-03-28T23:00:00Z"), to: Self.time("2026-03-29T22:00:00Z"), bucket: .day,
            zone: Self.berlin)
        #expect(spring.count == 2)
        let autumn = StatsReport.boundaries(
            from: Self.time("2026-10-24T22:00:00Z"), to: Self.time("2026-10-25T23:00:00Z"), bucket: .day,
            zone: Self.berlin)
        #expect(autumn.count == 2)
        // By the hour: the skipped hour has no bucket, the repeated one has two.
        let springHours = StatsReport.boundaries(
            from: Self.time("2026-03-28T23:00:00Z"), to: Self.time("2026-03-29T22:00:00Z"), bucket: .hour,
            zone: Self.berlin)
        #expect(springHours.count == 24)
        let autumnHours = StatsReport.boundaries(
            from: Self.time("2026-10-24T22:00:00Z"), to: Self.time("2026-10-25T23:00:00Z"), bucket: .hour,
            zone: Self.berlin)
        #expect(autumnHours.count == 26)
        #expect(
            autumnHours[2...4].map(\.rfc3339) == [
                "2026-10-25T00:00:00.000Z", "2026-10-25T01:00:00.000Z", "2026-10-25T02:00:00.000Z",
            ])
        // A time in the second 02:00 hour is in the second bucket.
        #expect(
            StatsReport.startOfBucket(holding: Self.time("2026-10-25T01:20:00Z"), bucket: .hour, zone: Self.berlin)
                == Self.time("2026-10-25T01:00:00Z"))
        #expect(
            StatsReport.startOfBucket(holding: Self.time("2026-10-25T00:20:00Z"), bucket: .hour, zone: Self.berlin)
                == Self.time("2026-10-25T00:00:00Z"))
    }

    /// Two hours of carousel `7`: a play across the boundary is counted where it began and its
    /// seconds split; views and clicks by quarter; a banner with nothing gets zeros; one no longer
    /// listed gets a row only where it has counts.
    static let records = StatsRecords(
        plays: [
            PlayRecord(carousel: 7, banner: "a", startedAt: time("2026-12-01T09:59:50Z"), shown: .seconds(20)),
            PlayRecord(carousel: 7, banner: "a", startedAt: time("2026-12-01T10:30:00Z"), shown: .milliseconds(2500)),
            PlayRecord(carousel: 7, banner: "gone", startedAt: time("2026-12-01T10:40:00Z"), shown: .seconds(5)),
        ],
        engagement: [
            EngagementCount(
                carousel: 7, banner: "a", quarter: time("2026-12-01T09:45:00Z").secondsSinceEpoch, views: 4, clicks: 1),
            EngagementCount(
                carousel: 7, banner: "a", quarter: time("2026-12-01T10:15:00Z").secondsSinceEpoch, views: 2, clicks: 0),
        ])

    static let report = StatsReport(
        records: records, from: time("2026-12-01T09:00:00Z"), to: time("2026-12-01T11:00:00Z"), bucket: .hour,
        zone: .utc, banners: ["a", "b"], shares: ["a": 0.75, "b": 0.25])

    @Test func playsViewsAndClicksFallInTheirBuckets() {
        let rows = Self.report.rows.map { row in
            "\(row.start.rfc3339.prefix(13)) \(row.banner) \(row.plays) \(row.shown) \(row.views) \(row.clicks) \(row.clickThroughRate.map { String($0) } ?? "-") \(row.plannedShare) \(row.playedShare.map { String($0) } ?? "-")"
        }
        #expect(
            rows == [
                "2026-12-01T09 a 1 10.0 seconds 4 1 0.25 0.75 1.0",
                "2026-12-01T09 b 0 0.0 seconds 0 0 - 0.25 0.0",
                "2026-12-01T10 a 1 12.5 seconds 2 0 0.0 0.75 0.7142857142857143",
                "2026-12-01T10 b 0 0.0 seconds 0 0 - 0.25 0.0",
                "2026-12-01T10 gone 1 5.0 seconds 0 0 - 0.0 0.2857142857142857",
            ])
    }

    @Test func csvAndJSONSayTheSame() throws {
        let csv = String(decoding: Self.report.csv(), as: UTF8.self)
        let lines = csv.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "start,end,banner,plays,shownSeconds,views,clicks,ctr,plannedShare,playedShare")
        #expect(lines[1] == "2026-12-01T09:00:00.000Z,2026-12-01T10:00:00.000Z,a,1,10.0,4,1,0.25,0.75,1.0")
        let json = try JSONSerialization.jsonObject(with: Data(Self.report.json(carousel: "lobby"))) as! [String: Any]
        let rows = json["rows"] as! [[String: Any]]
        #expect(rows.count == lines.count - 1)
        for (row, line) in zip(rows, lines.dropFirst()) {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            #expect(cells[0] == row["start"] as? String && cells[1] == row["end"] as? String)
            #expect(cells[2] == row["banner"] as? String)
            #expect(Int(cells[3]) == row["plays"] as? Int && Double(cells[4]) == row["shownSeconds"] as? Double)
            #expect(Int(cells[5]) == row["views"] as? Int && Int(cells[6]) == row["clicks"] as? Int)
            #expect(cells[7] == ((row["ctr"] as? Double).map { String($0) } ?? ""))
            #expect(Double(cells[8]) == row["plannedShare"] as? Double)
            #expect(cells[9] == ((row["playedShare"] as? Double).map { String($0) } ?? ""))
        }
        #expect(json["timeZone"] as? String == "UTC" && json["bucket"] as? String == "hour")
    }

    @Test func aBannerIdWithACommaIsQuotedInCSV() {
        let report = StatsReport(
            records: StatsRecords(plays: [], engagement: []), from: Self.time("2026-12-01T09:00:00Z"),
            to: Self.time("2026-12-01T10:00:00Z"), bucket: .hour, zone: .utc, banners: ["a,\"b\""])
        #expect(String(decoding: report.csv(), as: UTF8.self).contains(",\"a,\"\"b\"\"\",0,"))
    }
}

extension Timestamp {
    var secondsSinceEpoch: Int64 { nanosecondsSinceEpoch / 1_000_000_000 }
}
