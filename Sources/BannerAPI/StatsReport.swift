import Carousel
import JSON
import Store
import TimeZones

/// A carousel's proof of play over a span, per bucket (an hour or a day of the carousel's time
/// zone) and banner (docs/STATS.md): plays that began in the bucket, the seconds banners were
/// shown in it, and the views and clicks screens reported in it; each banner's planned share of
/// the airtime (its weight × its duration over the rotation's, now, docs/WEIGHTS.md) beside the
/// share of the bucket's shown seconds it had. Airtime, not plays: two turns in a row are one play.
struct StatsReport: Equatable {
    enum Bucket: String, CaseIterable {
        case hour, day

        /// Local seconds in one; hours and days are the only buckets, and zones' offsets are
        /// whole quarter hours, so a bucket is always whole quarter hours.
        var seconds: Int64 { self == .hour ? 3600 : 86_400 }
    }

    struct Row: Equatable {
        let start: Timestamp
        let end: Timestamp
        let banner: String
        var plays: Int64 = 0
        var shown: Duration = .zero
        var views: Int64 = 0
        var clicks: Int64 = 0
        /// Its planned share of the airtime now (0: not rotating now).
        var plannedShare: Double = 0
        /// Its share of the seconds banners were shown in the bucket; nil when none was.
        var playedShare: Double? = nil

        /// Clicks per view; nil without views.
        var clickThroughRate: Double? { views > 0 ? Double(clicks) / Double(views) : nil }
    }

    let from: Timestamp
    let to: Timestamp
    let bucket: Bucket
    let zone: ZoneRules
    let rows: [Row]

    /// The most buckets one report may have (about six weeks of hours, or three years of days).
    static let maximumBuckets = 1100

    /// - Parameters:
    ///   - from, to: the span asked for, already widened to bucket boundaries (`span`).
    ///   - banners: the carousel's banners, in order: each gets a row in every bucket; banners
    ///     no longer listed (or a takeover's own) get rows only where they have counts.
    ///   - shares: the planned share of the airtime of each banner that rotates now, by id.
    init(
        records: StatsRecords, from: Timestamp, to: Timestamp, bucket: Bucket, zone: ZoneRules, banners: [String],
        shares: [String: Double] = [:]
    ) {
        self.from = from
        self.to = to
        self.bucket = bucket
        self.zone = zone
        let boundaries = Self.boundaries(from: from, to: to, bucket: bucket, zone: zone)
        let others = Set(records.plays.map(\.banner) + records.engagement.map(\.banner)).subtracting(banners).sorted()
        let order = banners + others
        var rows: [Row] = []
        for (start, end) in zip(boundaries, boundaries.dropFirst()) {
            var byBanner: [String: Row] = [:]
            for play in records.plays {
                let overlap = min(play.lastShownAt, end) - max(play.startedAt, start)
                let began = play.startedAt >= start && play.startedAt < end
                guard began || overlap > .zero else { continue }
                var row = byBanner[play.banner] ?? Row(start: start, end: end, banner: play.banner)
                if began { row.plays += 1 }
                if overlap > .zero { row.shown += overlap }
                byBanner[play.banner] = row
            }
            for count in records.engagement {
                let quarter = Timestamp(secondsSinceEpoch: count.quarter)
                guard quarter >= start && quarter < end else { continue }
                var row = byBanner[count.banner] ?? Row(start: start, end: end, banner: count.banner)
                row.views += count.views
                row.clicks += count.clicks
                byBanner[count.banner] = row
            }
            let shown = byBanner.values.reduce(Duration.zero) { $0 + $1.shown }
            for banner in order {
                guard
                    var row = byBanner[banner]
                        ?? (banners.contains(banner) ? Row(start: start, end: end, banner: banner) : nil)
                else { continue }
                row.plannedShare = shares[banner] ?? 0
                row.playedShare = shown > .zero ? row.shown / shown : nil
                rows.append(row)
            }
        }
        self.rows = rows
    }

    // MARK: Buckets in a time zone

    /// `from..<to` widened to whole buckets: `from` back to the start of its bucket, `to` on to
    /// the end of its own (unless it is a boundary already).
    static func span(from: Timestamp, to: Timestamp, bucket: Bucket, zone: ZoneRules) -> (Timestamp, Timestamp) {
        let start = startOfBucket(holding: from, bucket: bucket, zone: zone)
        let lastStart = startOfBucket(holding: to, bucket: bucket, zone: zone)
        return (start, lastStart == to ? to : nextBoundary(after: lastStart, bucket: bucket, zone: zone))
    }

    /// Every boundary from `from` to `to`, both included; `from` and `to` are boundaries.
    static func boundaries(from: Timestamp, to: Timestamp, bucket: Bucket, zone: ZoneRules) -> [Timestamp] {
        var boundaries = [from]
        while let last = boundaries.last, last < to {
            boundaries.append(min(nextBoundary(after: last, bucket: bucket, zone: zone), to))
        }
        return boundaries
    }

    /// How many buckets `from..<to` holds (both boundaries), without listing them.
    static func bucketCount(from: Timestamp, to: Timestamp, bucket: Bucket) -> Int64 {
        // Local hours and days are at least 23 h a day apart at worst: a count that cannot be under.
        let seconds = (to.nanosecondsSinceEpoch - from.nanosecondsSinceEpoch) / 1_000_000_000
        return seconds / (bucket == .hour ? 1800 : 82_800) + 1
    }

    /// The start of the local hour or day holding `time`.
    static func startOfBucket(holding time: Timestamp, bucket: Bucket, zone: ZoneRules) -> Timestamp {
        let seconds = floorDivide(time.nanosecondsSinceEpoch, 1_000_000_000)
        let local = zone.localSeconds(at: seconds)
        let start = zone.instant(ofLocal: local - floorModulo(local, bucket.seconds))
        // A wall-clock hour that happened twice (clocks set back) starts at its second time when
        // `time` is in it.
        if bucket == .hour, start + bucket.seconds <= seconds,
            zone.localSeconds(at: start + bucket.seconds) == local - floorModulo(local, bucket.seconds)
        {
            return Timestamp(secondsSinceEpoch: start + bucket.seconds)
        }
        return Timestamp(secondsSinceEpoch: start)
    }

    /// The first boundary after `boundary`: the next local hour or midnight. An hour that happens
    /// twice (clocks set back) is two buckets; one skipped (set forward) is none.
    static func nextBoundary(after boundary: Timestamp, bucket: Bucket, zone: ZoneRules) -> Timestamp {
        let seconds = floorDivide(boundary.nanosecondsSinceEpoch, 1_000_000_000)
        let local = zone.localSeconds(at: seconds)
        var next = zone.instant(ofLocal: local - floorModulo(local, bucket.seconds) + bucket.seconds)
        let plain = seconds + bucket.seconds
        if bucket == .hour, floorModulo(zone.localSeconds(at: plain), bucket.seconds) == 0 { next = min(next, plain) }
        if next <= seconds { next = plain }
        return Timestamp(secondsSinceEpoch: next)
    }

    // MARK: Answers

    /// `{"carousel", "audience" (when asked for), "timeZone", "bucket", "from", "to", "rows": […]}`.
    func json(carousel: String, audience: String? = nil) -> [UInt8] {
        var object = JSONObject()
        object.add("carousel", carousel)
        if let audience { object.add("audience", audience) }
        object.add("timeZone", zone.name)
        object.add("bucket", bucket.rawValue)
        object.add("from", from.rfc3339)
        object.add("to", to.rfc3339)
        object.add(
            "rows",
            rows.map { row in
                var entry = JSONObject()
                entry.add("start", row.start.rfc3339)
                entry.add("end", row.end.rfc3339)
                entry.add("banner", row.banner)
                entry.add("plays", row.plays)
                entry.add("shownSeconds", Self.seconds(row.shown))
                entry.add("views", row.views)
                entry.add("clicks", row.clicks)
                entry.add("ctr", row.clickThroughRate)
                entry.add("plannedShare", CarouselJSON.share(row.plannedShare))
                entry.add("playedShare", row.playedShare.map(CarouselJSON.share))
                return entry
            })
        return object.line
    }

    /// The same rows as CSV (RFC 4180), with a header row; an empty cell where the JSON has null.
    func csv() -> [UInt8] {
        var text = CSV.record([
            "start", "end", "banner", "plays", "shownSeconds", "views", "clicks", "ctr", "plannedShare", "playedShare",
        ])
        for row in rows {
            text += CSV.record([
                row.start.rfc3339, row.end.rfc3339, row.banner, String(row.plays), String(Self.seconds(row.shown)),
                String(row.views), String(row.clicks), row.clickThroughRate.map { String($0) } ?? "",
                String(CarouselJSON.share(row.plannedShare)),
                row.playedShare.map { String(CarouselJSON.share($0)) } ?? "",
            ])
        }
        return Array(text.utf8)
    }

    /// Seconds to the millisecond, as a number.
    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.nanoseconds / 1_000_000) / 1000
    }
}
