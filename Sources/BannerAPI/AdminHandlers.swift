import Carousel
import CarouselRuntime
import Definitions
import MicroHTTP
import Store

/// The admin API's writes of definitions (docs/API.md, "Administration"): a carousel created,
/// replaced, patched or deleted, its banners added, replaced, patched, removed or reordered, now
/// or at a later instant (`?at=`, docs/SCHEDULED.md), and a kept revision restored. Each body is
/// checked on the calling thread; the change runs in the carousel's engine.
enum AdminHandlers {
    /// `POST /carousels`
    static func create(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let change = try AdminRequest.parse(nil, carousel: "", request: request)
        let label = BannerAPI.label(request, call.requestID)
        return .deferred {
            await administer(change, on: nil, api, by: call.requester, ifMatch: nil, label: label, origin: call.origin)
        }
    }

    /// The handler of a definition's or banner's write.
    static func handler(_ write: DefinitionWrite) -> Endpoint.Handler {
        { api, request, call throws(Problem) in try self.write(write, api, request, call) }
    }

    /// A write of a carousel's definition or banners: made now, or kept to be made at `?at=`.
    private static func write(
        _ write: DefinitionWrite, _ api: BannerAPI, _ request: borrowing Request, _ call: Call
    ) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let change = try AdminRequest.parse(write, carousel: live.name, bannerID: call.route.first, request: request)
        let label = BannerAPI.label(request, call.requestID)
        let ifMatch = request.header("If-Match")
        let now = api.clock()
        let requester = call.requester
        let origin = call.origin
        guard let at = try ScheduledRequests.at(of: request, write: write, now: now) else {
            return .deferred {
                await administer(change, on: live, api, by: requester, ifMatch: ifMatch, label: label, origin: origin)
            }
        }
        // Tried on the definition as it is now, so that an invalid change is refused now rather
        // than dropped at its time (the definition may still change before then).
        _ = try change.revise(live.stored.definition)
        let pending = PendingChange(
            carousel: live.key.serial, at: at, method: request.method, path: ScheduledRequests.path(of: request),
            body: String(decoding: request.body, as: UTF8.self), ifMatch: ifMatch, requester: requester,
            createdAt: now)
        return .deferred {
            do throws(StoreError) {
                let stored = try await api.scheduled.schedule(pending)
                api.logger.notice("\(label) → change \(stored.id) scheduled for \(at.rfc3339)")
                return PreparedReads.uncached(
                    ScheduledRequests.json(stored, carousel: live.name), status: 202,
                    headers: [HTTPHeader("Location", "/carousels/\(live.name)/pending/\(stored.id)")]
                        + api.cors.headers(for: origin))
            } catch {
                return api.refused(.store(error), label: label, origin: origin)
            }
        }
    }

    /// `POST /carousels/{name}/revisions/{n}/restore`: a new revision equal to n.
    static func restore(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let live = try api.carousel(call)
        let number = try RevisionDocuments.number(call.route.first!, of: live.name)
        let label = BannerAPI.label(request, call.requestID)
        let ifMatch = request.header("If-Match")
        return .deferred {
            let kept: Revision?
            do throws(StoreError) {
                kept = try api.directory.revision(number, of: live)
            } catch {
                return api.refused(.store(error), label: label, origin: nil)
            }
            guard let kept else {
                return api.refused(RevisionDocuments.notKept(number, of: live.name), label: label, origin: nil)
            }
            return await administer(
                .replace(kept.definition), on: live, api, by: call.requester, restoring: number, ifMatch: ifMatch,
                label: label, origin: nil)
        }
    }

    /// Runs an admin change by `requester`: a new carousel (`live` nil), or a change of `live` (a
    /// restore of revision `restoring`, when it is one).
    private static func administer(
        _ change: AdminRequest, on live: ServedCarousel?, _ api: BannerAPI, by requester: Requester,
        restoring: UInt64? = nil, ifMatch: String?, label: String, origin: String?
    ) async -> PreparedResponse {
        do throws(Problem) {
            return try await administered(
                change, on: live, api, by: requester, restoring: restoring, ifMatch: ifMatch, label: label,
                origin: origin)
        } catch {
            return api.refused(error, label: label, origin: origin)
        }
    }

    private static func administered(
        _ change: AdminRequest, on live: ServedCarousel?, _ api: BannerAPI, by requester: Requester,
        restoring: UInt64?, ifMatch: String?, label: String, origin: String?
    ) async throws(Problem) -> PreparedResponse {
        let headers = api.cors.headers(for: origin)
        // Before any change runs: the store may be read (docs/MEDIA.md).
        try MediaRequests.rememberImages(named: change, in: api.media)
        guard let live else {
            guard case .create(let definition) = change else { preconditionFailure("only create has no carousel") }
            try MediaRequests.checkLibraryImages(of: definition, besides: nil, in: api.media.index)
            let created: ServedCarousel
            do throws(StoreError) { created = try api.directory.create(definition, by: requester) } catch {
                throw .store(error)
            }
            let stored = created.stored
            let count = definition.banners.count
            api.logger.notice(
                "\(label) → created carousel '\(created.name)' of \(count) banner\(count == 1 ? "" : "s")")
            return PreparedResponse(
                DefinitionDocuments.definition(
                    stored, tag: created.definitionTag(revision: stored.revision), status: 201,
                    headers: headers + [HTTPHeader("Location", "/carousels/\(created.name)")]))
        }
        let condition = live.condition(ifMatch: ifMatch)
        if case .delete = change {
            do throws(ChangeError<Never>) {
                try await api.directory.delete(live, if: condition, by: requester)
            } catch {
                throw .change(error, of: live, ifMatch: ifMatch)
            }
            api.logger.notice("\(label) → deleted carousel '\(live.name)'")
            return PreparedResponse(Response(status: 204, headers: headers))
        }
        let revised: StoredCarousel
        do throws(ChangeError<Problem>) {
            let (action, target) = restoring.map { (AuditAction.restoreRevision, String($0)) } ?? change.audit
            revised = try await live.edit(
                if: condition, by: requester, as: action, target: target, restoring: restoring
            ) {
                [index = api.media.index] current throws(Problem) in
                let revised = try change.revise(current)
                try MediaRequests.checkLibraryImages(of: revised, besides: current, in: index)
                return revised
            }
        } catch {
            throw .change(error, of: live, ifMatch: ifMatch) { $0 }
        }
        let tag = live.definitionTag(revision: revised.revision)
        let restored = restoring.map { " (revision \($0) restored)" } ?? ""
        api.logger.notice("\(label) → carousel '\(live.name)' at revision \(revised.revision)\(restored)")
        switch change {
        case .addBanner(let banner, _):
            return PreparedResponse(
                DefinitionDocuments.banner(
                    banner, tag: tag, status: 201,
                    headers: headers + [HTTPHeader("Location", "/carousels/\(live.name)/banners/\(banner.id)")]))
        case .replaceBanner(let id, _), .patchBanner(let id, _):
            let banner = revised.definition.banners.first { $0.id == id }!
            return PreparedResponse(DefinitionDocuments.banner(banner, tag: tag, status: 200, headers: headers))
        case .deleteBanner:
            return PreparedResponse(Response(status: 204, headers: headers + [HTTPHeader("ETag", tag)]))
        default:
            return PreparedResponse(DefinitionDocuments.definition(revised, tag: tag, status: 200, headers: headers))
        }
    }
}
