import Carousel
import CarouselRuntime
import MicroHTTP
import Store

/// The answers for changes the runtime did not make (docs/API.md, errors).
extension Problem {
    /// A change to `live` refused: by its rules (`refusal` says how), by `If-Match`, or by the store.
    static func change<Refusal>(
        _ error: ChangeError<Refusal>, of live: ServedCarousel, ifMatch: String?, refusal: (Refusal) -> Problem
    ) -> Problem {
        switch error {
        case .refused(let reason):
            return refusal(reason)
        case .conditionFailed(let current):
            let tag = live.definitionTag(revision: current.revision)
            return Problem(
                status: 412,
                detail: "If-Match \(ifMatch ?? "") is not the carousel '\(live.name)' as it is now (\(tag), revision "
                    + "\(current.revision)): someone changed it since you read it; GET it again, reapply your change "
                    + "and send the new ETag",
                headers: [HTTPHeader("ETag", tag)])
        case .store(let error):
            return store(error)
        }
    }

    /// A change that cannot be refused as such (a delete) not made: by `If-Match`, or by the store.
    static func change(_ error: ChangeError<Never>, of live: ServedCarousel, ifMatch: String?) -> Problem {
        change(error, of: live, ifMatch: ifMatch, refusal: unreachable)
    }

    private static func unreachable(_ never: Never) -> Problem {}

    /// `work`'s result, or its store error as the answer's problem.
    static func storeResult<Value>(_ work: () throws(StoreError) -> Value) throws(Problem) -> Value {
        do throws(StoreError) { return try work() } catch { throw store(error) }
    }

    /// The answer for a store that did not do what it was asked (docs/STORE.md).
    static func store(_ error: StoreError) -> Problem {
        switch error {
        case .duplicate(let name):
            Problem(
                status: 409, detail: "a carousel named '\(name)' exists already; PUT /carousels/\(name) replaces it")
        case .notFound(let name):
            notFound(carousel: name)
        case .conflict(let name, let revision):
            Problem(
                status: 412,
                detail: "carousel '\(name)' was changed meanwhile (now revision \(revision)); GET it again, "
                    + "reapply your change and retry")
        case .unavailable(let detail), .unusable(let detail):
            Problem(
                status: 503, detail: "nothing was changed: \(detail)",
                headers: [HTTPHeader("Retry-After", "\(retryAfterSeconds)")])
        case .missingMedia:
            // As when the image was missing before the change began (MediaRequests): 422.
            Problem.unprocessable(
                "nothing was changed: \(error); upload it again (POST /media), or pick one of GET /media")
        case .notPending:
            Problem(status: 409, detail: "nothing was changed: \(error)")
        }
    }

    /// Seconds a client is asked to wait before retrying a write the store refused.
    static let retryAfterSeconds = 5

    static func notFound(carousel name: String) -> Problem {
        Problem(status: 404, detail: "no carousel named '\(name)'; GET /carousels lists them")
    }

    /// A command the carousel's rules refuse.
    static func command(_ error: CarouselError) -> Problem {
        switch error {
        case .noBanners:
            Problem(status: 409, detail: "there are no banners to move to; add banners to the configuration")
        case .indexOutOfRange(let index, let count):
            Problem.unprocessable(
                count == 0
                    ? "index \(index) is out of range: there are no banners"
                    : "index \(index) is out of range: there are \(count) banners (0...\(count - 1))")
        case .pauseDurationOutOfRange(let duration):
            Problem.unprocessable("pause of \(duration.seconds) seconds is out of range")
        case .takeoverDurationOutOfRange(let duration):
            Problem.unprocessable("seconds: a takeover of \(duration.seconds) seconds is out of range (at most a year)")
        case .takeoverInProgress(let bannerID):
            Problem(
                status: 409,
                detail:
                    "a takeover by banner '\(bannerID)' holds every screen; end it (DELETE …/takeover) before moving")
        }
    }
}
