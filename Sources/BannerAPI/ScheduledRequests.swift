import Carousel
import CarouselRuntime
import JSON
import Logging
import MicroHTTP
import Store
import TimeZones

/// Scheduled changes over HTTP (docs/SCHEDULED.md): the `at` of a definition or banner write,
/// the documents of `…/pending`, and the request a pending change keeps, made again at its time.
enum ScheduledRequests {
    /// How far ahead a change may be scheduled.
    static let maximumAhead: Duration = .seconds(31_536_000)

    /// The `at` of a write: nil when it has none (made now). A 422 naming `at` when it cannot be
    /// read, is not after `now`, is more than a year ahead, or is given to a write that cannot be
    /// scheduled (deleting a carousel).
    static func at(of request: borrowing Request, write: DefinitionWrite, now: Timestamp) throws(Problem) -> Timestamp?
    {
        guard let text = request.queryParameter("at") else { return nil }
        guard write != .delete else {
            throw Problem.unprocessable("at: deleting a carousel cannot be scheduled; delete it when it is time")
        }
        guard let at = Timestamp(rfc3339: text) else {
            throw Problem.unprocessable("at: '\(text)' is not an RFC 3339 date-time (2026-12-24T18:00:00+01:00)")
        }
        guard at > now else {
            throw Problem.unprocessable("at: \(at.rfc3339) is not in the future (now is \(now.rfc3339))")
        }
        guard at <= now + maximumAhead else {
            throw Problem.unprocessable("at: \(at.rfc3339) is more than a year ahead")
        }
        return at
    }

    /// What a pending change keeps of its request: the path, with the query it needs again
    /// (`position`, for a banner added), not `at`.
    static func path(of request: borrowing Request) -> String {
        request.path + (request.queryParameter("position").map { "?position=\($0)" } ?? "")
    }

    /// The request a pending change keeps, as it came (its body, its If-Match).
    static func request(of change: PendingChange) -> Request {
        Request(
            method: change.method, path: change.path,
            headers: [HTTPHeader("Content-Type", "application/json")]
                + (change.ifMatch.map { [HTTPHeader("If-Match", $0)] } ?? []),
            body: Array(change.body.utf8))
    }

    /// The write pending change `change` of carousel `carousel` asks for, read again from the
    /// request it keeps, with the parser of the request made now.
    static func asked(by change: PendingChange, carousel: String) throws(Problem) -> AdminRequest {
        let request = request(of: change)
        let route = try Routes.resolve(method: request.method, path: request.path)
        guard let write = route.endpoint.definitionWrite else {
            throw Problem.badRequest("\(change.method) \(change.path) is not a definition or banner write")
        }
        return try AdminRequest.parse(write, carousel: carousel, bannerID: route.first, request: request)
    }

    /// What `changes` (soonest first) will do to the state of `live` when each is made, as the
    /// timeline plans them: each tried on the definition the ones before it leave, with its
    /// If-Match checked on the revision they lead to; one that would be dropped is left out.
    static func redefinitions(_ changes: [PendingChange], of live: ServedCarousel) -> [PlannedRedefinition] {
        var stored = live.stored
        var planned: [PlannedRedefinition] = []
        for change in changes {
            if let condition = live.condition(ifMatch: change.ifMatch), !condition(stored.revision) { continue }
            guard let asked = try? asked(by: change, carousel: live.name),
                let new = try? asked.revise(stored.definition)
            else { continue }
            let old = stored.definition
            planned.append(
                PlannedRedefinition(at: change.at, change: change.id) { new.redefine(&$0, from: old, at: $1) })
            stored = StoredCarousel(
                definition: new, revision: stored.revision + 1, anchor: stored.anchor, serial: stored.serial)
        }
        return planned
    }

    static func json(_ change: PendingChange, carousel: String) -> JSONObject {
        var object = JSONObject()
        object.add("id", change.id)
        object.add("carousel", carousel)
        object.add("at", change.at.rfc3339)
        object.add("method", change.method)
        object.add("path", change.path)
        object.add("body", change.body.isEmpty ? nil : EncodedJSON(Array(change.body.utf8)))
        object.add("ifMatch", change.ifMatch)
        object.add("actor", change.requester.actor)
        object.add("requestId", change.requester.requestID)
        object.add("createdAt", change.createdAt.rfc3339)
        return object
    }

    /// `GET …/pending`: `{"carousel", "pending": [...]}`, soonest first.
    static func list(_ changes: [PendingChange], carousel: String) -> PreparedResponse {
        var object = JSONObject()
        object.add("carousel", carousel)
        object.add("pending", changes.map { json($0, carousel: carousel) })
        return PreparedReads.uncached(object)
    }

    /// A pending change's id in a path; a 404 when it is not one.
    static func id(_ text: String, of carousel: String) throws(Problem) -> Int64 {
        guard let id = Int64(text), id > 0 else { throw notPending(text, of: carousel) }
        return id
    }

    static func notPending(_ id: String, of carousel: String) -> Problem {
        Problem(
            status: 404,
            detail: "carousel '\(carousel)' has no pending change \(id); GET /carousels/\(carousel)/pending lists them")
    }
}

/// Makes scheduled changes when they are due (`ScheduledChanges` calls it). Holds only what it
/// needs, not the API: the runtime keeps it, and the API keeps the runtime's parts.
struct PendingChangeMaker: Sendable {
    let media: MediaLibrary
    let access: AccessPolicy
    let logger: Logger

    /// Makes scheduled change `change` on `live` now that it is due: its request read again and
    /// made as an admin write by whoever asked, claimed in the write's transaction. One that can no
    /// longer be made as asked (its If-Match no longer holds, its token was revoked or expired, or
    /// its request is now refused) is dropped with an audit entry saying why.
    func make(_ change: PendingChange, on live: ServedCarousel) async {
        let label = "\(change.method) \(change.path) (change \(change.id), due \(change.at.rfc3339))"
        if let withdrawn = access.withdrawn(change.requester, askedAt: change.createdAt, carousel: live.name) {
            await skip(change, on: live, because: withdrawn, label: label)
            return
        }
        let asked: AdminRequest
        do throws(Problem) {
            asked = try ScheduledRequests.asked(by: change, carousel: live.name)
            try MediaRequests.rememberImages(named: asked, in: media)
        } catch {
            await skip(change, on: live, because: error.detail, label: label)
            return
        }
        let (action, target) = asked.audit
        do throws(ChangeError<Problem>) {
            let revised = try await live.edit(
                if: live.condition(ifMatch: change.ifMatch), by: change.requester, as: action, target: target,
                applying: change.id
            ) { [index = media.index] current throws(Problem) in
                let revised = try asked.revise(current)
                try MediaRequests.checkLibraryImages(of: revised, besides: current, in: index)
                return revised
            }
            logger.notice("\(label) → carousel '\(live.name)' at revision \(revised.revision)")
        } catch {
            switch error {
            case .conditionFailed(let current):
                await skip(
                    change, on: live,
                    because: "its If-Match no longer holds: the carousel is at revision \(current.revision)",
                    label: label)
            case .refused(let problem):
                await skip(change, on: live, because: problem.detail, label: label)
            case .store(.notPending):
                logger.debug("\(label): made or cancelled by another process")
            case .store(let failure):
                logger.error("\(label) failed: \(failure); tried again in \(ScheduledChanges<HTTPOutlets>.retryPause)")
            }
        }
    }

    private func skip(_ change: PendingChange, on live: ServedCarousel, because reason: String, label: String) async {
        do throws(ChangeError<Never>) {
            try await live.skip(change, because: reason)
            logger.warning("\(label) not made: \(reason)")
        } catch {
            if case .store(.notPending) = error { return }
            logger.error("\(label) could not be dropped (\(error)); tried again later")
        }
    }
}
