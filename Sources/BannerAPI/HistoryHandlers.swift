import CarouselRuntime
import MicroHTTP
import Store

/// What the store remembers, over HTTP: a carousel's revisions (docs/HISTORY.md; restoring one is
/// an admin write, `AdminHandlers.restore`), its changes scheduled for later (docs/SCHEDULED.md)
/// and the audit log (docs/AUDIT.md).
enum HistoryHandlers {
    /// `GET /carousels/{name}/revisions`: the history kept, newest first.
    static func revisions(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                return RevisionDocuments.list(try directory.revisions(of: live), of: live.name)
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `GET /carousels/{name}/revisions/{n}`: the definition as it was.
    static func revision(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let number = try RevisionDocuments.number(call.route.first!, of: live.name)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                guard let kept = try directory.revision(number, of: live) else {
                    return PreparedResponse(RevisionDocuments.notKept(number, of: live.name).response)
                }
                return RevisionDocuments.document(kept)
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `GET /carousels/{name}/pending`: its scheduled changes, soonest first.
    static func pending(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        return .deferred { [scheduled = api.scheduled] in
            do throws(StoreError) {
                return ScheduledRequests.list(try scheduled.pending(of: live.key.serial), carousel: live.name)
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `DELETE /carousels/{name}/pending/{id}`: a scheduled change cancelled.
    static func cancelPending(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let text = call.route.first!
        let id = try ScheduledRequests.id(text, of: live.name)
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [scheduled = api.scheduled, clock = api.clock, logger = api.logger] in
            do throws(StoreError) {
                let attribution = Attribution(by: requester, at: clock())
                guard try await scheduled.cancel(id, of: live.key.serial, by: attribution) else {
                    return api.refused(ScheduledRequests.notPending(text, of: live.name), label: label, origin: nil)
                }
                logger.notice("\(label) → change \(id) cancelled by \(requester.actor)")
                return PreparedResponse(Response(status: 204))
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
        }
    }

    /// `GET /audit`: the audit log, newest first, as JSON or CSV.
    static func auditLog(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let (query, csv) = try AuditDocuments.query(of: request)
        return .deferred { [directory = api.directory] in
            do throws(StoreError) {
                return AuditDocuments.response(try directory.auditLog(query), of: query, csv: csv)
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }
}
