import CarouselRuntime
import MicroHTTP
import Store

/// Named tokens over HTTP (docs/TOKENS.md): listed without secrets, created with their secret in
/// the one answer, revoked.
enum TokenHandlers {
    /// `GET /tokens`
    static func list(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .deferred { [tokens = api.tokens, clock = api.clock] in
            do throws(StoreError) {
                return TokenRequests.list(try tokens.all(), now: clock())
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `POST /tokens`
    static func create(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let asked = try TokenRequests.newToken(of: request, now: api.clock()) {
            api.directory.carousel(named: $0) != nil
        }
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [tokens = api.tokens, clock = api.clock, logger = api.logger] in
            let now = clock()
            do throws(StoreError) {
                guard
                    let (record, secret) = try tokens.create(
                        name: asked.name, role: asked.role, carousels: asked.carousels,
                        expiresAt: asked.expiresAt, by: requester, at: now)
                else {
                    let problem = Problem(
                        status: 409,
                        detail: "a token named '\(asked.name)' exists already; choose another name, or "
                            + "DELETE /tokens/\(asked.name) first")
                    return api.refused(problem, label: label, origin: nil)
                }
                let scope = asked.carousels.map { " for \($0.joined(separator: ", "))" } ?? ""
                logger.notice(
                    "\(label) → token '\(asked.name)' created by \(requester.actor): \(asked.role.rawValue)\(scope)")
                return PreparedReads.uncached(TokenRequests.json(record, now: now, secret: secret), status: 201)
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
        }
    }

    /// `DELETE /tokens/{name}`
    static func revoke(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let name = call.route.first!
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [tokens = api.tokens, clock = api.clock, logger = api.logger] in
            do throws(StoreError) {
                guard try tokens.revoke(named: name, by: requester, at: clock()) else {
                    let problem = Problem(status: 404, detail: "no token named '\(name)'; GET /tokens lists them")
                    return api.refused(problem, label: label, origin: nil)
                }
                logger.notice("\(label) → token '\(name)' revoked by \(requester.actor)")
                return PreparedResponse(Response(status: 204))
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
        }
    }
}
