import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// Proof of play over HTTP (docs/STATS.md): views screens report, clicks counted on the way to
/// a banner's link, and the stats that add them up.
enum EngagementHandlers {
    /// `POST /carousels/{name}/views`
    static func views(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let state = live.engine.snapshot
        let audience = state.audienceWithOwnState(try QueryValues.audience(of: request))
        let views = try EngagementRequests.views(of: request, state: state, now: api.clock())
        let headers = api.cors.headers(for: call.origin)
        guard views.contains(where: { $0.id != nil }) else {
            api.directory.plays.countViews(views, carousel: live.key.serial, audience: audience)
            return .prepared(api.noContent(for: call.origin))
        }
        // Views with ids are acknowledged once stored: a screen keeps them until then, and
        // sending them again counts nothing twice (docs/STATS.md).
        return .deferred { [directory = api.directory, serial = live.key.serial, logger = api.logger] in
            do throws(StoreError) {
                try directory.plays.storeViews(views, carousel: serial, audience: audience)
                return PreparedResponse(Response(status: 204, headers: headers))
            } catch {
                logger.warning("views not stored yet: \(error); the screen is asked to send them again")
                let problem = Problem(
                    status: 503,
                    detail: "the views are not stored yet (\(error)); send them again later: with their ids "
                        + "they count once",
                    headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")] + headers)
                return PreparedResponse(problem.response)
            }
        }
    }

    /// `GET /carousels/{name}/banners/{id}/click`: 302 to the banner's link, counted.
    static func click(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let state = live.engine.snapshot
        let audience = state.audienceWithOwnState(try QueryValues.audience(of: request))
        let (banner, response) = try EngagementRequests.click(
            banner: call.route.first!, state: state, carousel: live.name)
        api.directory.plays.countClick(
            banner: banner.id, carousel: live.key.serial, audience: audience, at: api.clock())
        return .response(response)
    }

    /// `GET /carousels/{name}/stats`: plays, views and clicks by bucket and banner.
    static func stats(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let definition = live.stored.definition
        let query = try EngagementRequests.statsQuery(of: request, zone: definition.timeZone, now: api.clock())
        // An audience's own stats: its screens' plays, views and clicks; its banners and its
        // rotation's shares (docs/AUDIENCES.md).
        let audience = try QueryValues.audience(of: request)
        let state = live.engine.snapshot.state(for: audience)
        let banners = definition.banners.filter { $0.isFor(state.audience) }.map(\.id)
        let shares = Dictionary(
            uniqueKeysWithValues: zip(state.banners, state.airtimeShares).compactMap { banner, share in
                share.map { (banner.id, $0) }
            })
        let headers = api.cors.headers(for: call.origin)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                let records = try directory.plays.records(
                    of: live.key.serial, audience: audience, from: query.from, to: query.to)
                let report = StatsReport(
                    records: records, from: query.from, to: query.to, bucket: query.bucket,
                    zone: definition.timeZone, banners: banners, shares: shares)
                let (type, body) =
                    query.csv
                    ? ("text/csv; charset=utf-8", report.csv())
                    : (PreparedReads.jsonContentType.value, report.json(carousel: live.name, audience: audience))
                return PreparedResponse(
                    Response(
                        status: 200,
                        headers: [HTTPHeader("Content-Type", type), HTTPHeader("Cache-Control", "no-store")] + headers,
                        body: body))
            } catch {
                var problem = Problem.store(error)
                problem.headers += headers
                return PreparedResponse(problem.response)
            }
        }
    }
}
