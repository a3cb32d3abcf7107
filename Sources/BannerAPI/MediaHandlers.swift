import CarouselRuntime
import Definitions
import Media
import MicroHTTP
import Store

/// The media library over HTTP (docs/MEDIA.md): the files, public and immutable; the list, the
/// upload and the deletion, the admin role's.
enum MediaHandlers {
    /// `GET /media/{id}`: the original, its metadata removed.
    static func original(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        try file(.original, api, request, call)
    }

    /// `GET /media/{id}/{width}.webp`: a variant.
    static func variant(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        guard let text = call.route.second, let width = Int(text), MediaReference.variantWidths.contains(width),
            String(width) == text
        else { throw notFound(request.path) }
        return try file(.variant(width: width), api, request, call)
    }

    /// A file of a well-formed id (64 hexadecimal digits), from the files kept as responses, else
    /// read from the store.
    private static func file(_ file: MediaFile, _ api: BannerAPI, _ request: borrowing Request, _ call: Call)
        throws(Problem) -> Reply
    {
        let id = call.route.first!
        guard MediaReference.isID(id) else { throw notFound(request.path) }
        let asked = MediaFileRequest(id: id, file: file, request: request)
        if let answer = api.mediaFiles.answer(asked) { return .prepared(answer) }
        return .deferred { [media = api.media, mediaFiles = api.mediaFiles] in
            do throws(StoreError) {
                let type = file == .original ? media.index.record(id)?.type : "image/webp"
                guard let type, let bytes = try media.bytes(of: id, file) else {
                    return PreparedResponse(notFound(asked.path).response)
                }
                return mediaFiles.keep(bytes, type: type, for: asked)
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    private static func notFound(_ path: String) -> Problem {
        Problem(status: 404, detail: "no media file \(path); GET /media lists the library")
    }

    /// `GET /media`: every image, with the banners that show it.
    static func list(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        .deferred { [media = api.media] in
            do throws(StoreError) {
                return MediaRequests.list(try media.records(), uses: media.uses())
            } catch {
                return PreparedResponse(Problem.store(error).response)
            }
        }
    }

    /// `POST /media`: an upload, checked for what costs nothing here, decoded while the connection
    /// waits.
    static func upload(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let (bytes, declaredType) = try MediaRequests.upload(of: request)
        let limits = api.media.settings.limits
        let checked = bytes.withUnsafeBytes { raw in
            Result { () throws(MediaRefusal) in
                try MediaProcessing.check(raw, declaredType: declaredType, limits: limits)
            }
        }
        if case .failure(let refusal) = checked { throw MediaRequests.problem(refusal) }
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [media = api.media, logger = api.logger] in
            do throws(MediaLibrary.UploadFailure) {
                switch try await media.upload(bytes, declaredType: declaredType, by: requester) {
                case .created(let record):
                    logger.notice(
                        "\(label) → media \(record.id) (\(record.type), \(record.width) × \(record.height), "
                            + "\(record.variants.count) variants)")
                    return PreparedReads.uncached(
                        MediaRequests.json(record, usedBy: []), status: 201,
                        headers: [HTTPHeader("Location", "/media/\(record.id)")])
                case .existing(let record):
                    return PreparedReads.uncached(
                        MediaRequests.json(record, usedBy: media.uses()[record.id] ?? []), status: 200,
                        headers: [HTTPHeader("Location", "/media/\(record.id)")])
                }
            } catch {
                let problem: Problem =
                    switch error {
                    case .refused(let refusal): MediaRequests.problem(refusal)
                    case .busy(let pending):
                        Problem(
                            status: 503,
                            detail: "\(pending) uploads are being decoded or waiting; send this one again later",
                            headers: [HTTPHeader("Retry-After", "\(Problem.retryAfterSeconds)")])
                    case .store(let failure): Problem.store(failure)
                    }
                return api.refused(problem, label: label, origin: nil)
            }
        }
    }

    /// `DELETE /media/{id}`: refused while a banner shows it.
    static func delete(_ api: BannerAPI, _ request: borrowing Request, _ call: Call) throws(Problem) -> Reply {
        let id = call.route.first!
        guard MediaReference.isID(id) else { throw notFound(request.path) }
        let label = BannerAPI.label(request, call.requestID)
        let requester = call.requester
        return .deferred { [media = api.media, mediaFiles = api.mediaFiles, logger = api.logger] in
            do throws(MediaLibrary.DeletionFailure) {
                try media.delete(id, by: requester)
                mediaFiles.forget(id)
                logger.notice("\(label) → media \(id) deleted")
                return PreparedResponse(Response(status: 204))
            } catch {
                let problem: Problem =
                    switch error {
                    case .notFound: Problem(status: 404, detail: "no media \(id); GET /media lists the library")
                    case .inUse(let uses):
                        Problem(
                            status: 409,
                            detail: "media \(id) is shown by "
                                + uses.map { "banner '\($0.banner)' of carousel '\($0.carousel)'" }.joined(
                                    separator: ", ") + "; give those banners another image first")
                    case .store(let failure): Problem.store(failure)
                    }
                return api.refused(problem, label: label, origin: nil)
            }
        }
    }
}
