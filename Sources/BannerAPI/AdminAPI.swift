import Carousel
import Definitions
import JSON
import MicroHTTP
import Store

/// The endpoints that change a carousel's definition or its banners (the admin role); a banner's
/// write names its banner in the path.
enum DefinitionWrite: Sendable, Equatable {
    case replace, patch, delete, addBanner, reorder
    case replaceBanner, patchBanner, deleteBanner
}

/// An admin request, checked on the calling thread (route, role, body syntax and field rules),
/// ready to run in its carousel's engine. Bodies follow the configuration file's rules, with its
/// messages: an invalid value is a 422 naming the field's path.
enum AdminRequest: Sendable {
    case create(CarouselDefinition)
    case replace(CarouselDefinition)
    /// A JSON Merge Patch (RFC 7396) of the definition.
    case patch(JSONValue)
    case delete
    case addBanner(Banner, position: Int?)
    case replaceBanner(id: String, Banner)
    case patchBanner(id: String, JSONValue)
    case deleteBanner(id: String)
    case reorder(ids: [String])

    /// The write `write` asks for (nil: a new carousel) of carousel `name`, or of its banner
    /// `bannerID` for a banner's write.
    static func parse(
        _ write: DefinitionWrite?, carousel name: String, bannerID: String? = nil, request: borrowing Request
    ) throws(Problem) -> AdminRequest {
        guard let write else {
            let body = try required(request)
            return .create(try validating { () throws(FieldError) in try CarouselDefinition.decode(body) })
        }
        switch write {
        case .replace:
            let body = try required(request)
            return .replace(
                try validating { () throws(FieldError) in try CarouselDefinition.decode(body, impliedName: name) })
        case .patch:
            return .patch(try patch(request, fields: CarouselDefinition.acceptedFieldNames))
        case .delete:
            return .delete
        case .addBanner:
            let body = try required(request)
            let banner = try validating { () throws(FieldError) in try BannerDecoding.banner(JSONFields(body)) }
            var position: Int?
            if let given = request.queryParameter("position") {
                guard let parsed = Int(given), parsed >= 0 else {
                    throw Problem.unprocessable(
                        "position: '\(given)' is not a position; use 0 (first) to the banner count (last)")
                }
                position = parsed
            }
            return .addBanner(banner, position: position)
        case .replaceBanner:
            let id = bannerID!
            let body = try required(request)
            return .replaceBanner(id: id, try banner(body, id: id))
        case .patchBanner:
            let id = bannerID!
            return .patchBanner(id: id, try patch(request, fields: BannerDecoding.fieldNames))
        case .deleteBanner:
            return .deleteBanner(id: bannerID!)
        case .reorder:
            let body = try required(request)
            let ids = try validating { () throws(FieldError) -> [String] in
                let fields = try JSONFields(body)
                try fields.rejectUnknown(allowing: ["ids"])
                return try fields.required("ids", .array).enumerated().map { (offset, element) throws(FieldError) in
                    try JSONKind<String>.string.read(element, at: "ids[\(offset)]")
                }
            }
            return .reorder(ids: ids)
        }
    }

    /// How the audit log names this change, and what in the carousel it is about (a banner).
    var audit: (action: AuditAction, target: String?) {
        switch self {
        case .create: (.createCarousel, nil)
        case .replace: (.replaceCarousel, nil)
        case .patch: (.patchCarousel, nil)
        case .delete: (.deleteCarousel, nil)
        case .addBanner(let banner, _): (.addBanner, banner.id)
        case .replaceBanner(let id, _): (.replaceBanner, id)
        case .patchBanner(let id, _): (.patchBanner, id)
        case .deleteBanner(let id): (.deleteBanner, id)
        case .reorder: (.reorderBanners, nil)
        }
    }

    /// The new definition this request makes of `current`, or the problem with it.
    func revise(_ current: CarouselDefinition) throws(Problem) -> CarouselDefinition {
        var revised = current
        switch self {
        case .create(let definition), .replace(let definition):
            return definition
        case .patch(let patch):
            let merged = Self.value(of: current.json()).merged(with: patch)
            return try Self.validating { () throws(FieldError) in
                try CarouselDefinition.decode(merged, impliedName: current.name)
            }
        case .delete:
            return current
        case .addBanner(let banner, let position):
            if current.banners.contains(where: { $0.id == banner.id }) {
                throw Problem(
                    status: 409,
                    detail: "carousel '\(current.name)' has a banner '\(banner.id)' already; "
                        + "PUT /carousels/\(current.name)/banners/\(banner.id) replaces it")
            }
            let count = current.banners.count
            let at = position ?? count
            guard at <= count else {
                throw Problem.unprocessable("position: \(at) is out of range; use 0 to \(count) (\(count) banners)")
            }
            revised.banners.insert(banner, at: at)
        case .replaceBanner(let id, let banner):
            revised.banners[try Self.position(of: id, in: current)] = banner
        case .patchBanner(let id, let patch):
            let position = try Self.position(of: id, in: current)
            if case .object(let members) = patch, members["id"] == .null {
                throw Problem.unprocessable("id: a banner's id cannot be removed")
            }
            let merged = Self.value(of: BannerDecoding.json(current.banners[position])).merged(with: patch)
            revised.banners[position] = try Self.banner(merged, id: id)
        case .deleteBanner(let id):
            revised.banners.remove(at: try Self.position(of: id, in: current))
        case .reorder(let ids):
            let known = current.banners.map(\.id)
            guard ids.count == known.count, Set(ids) == Set(known) else {
                let missing = known.filter { !ids.contains($0) }
                let unknown = ids.filter { !known.contains($0) }
                var reasons: [String] = []
                if !missing.isEmpty { reasons.append("missing \(missing.joined(separator: ", "))") }
                if !unknown.isEmpty { reasons.append("no such banner \(unknown.joined(separator: ", "))") }
                if reasons.isEmpty { reasons.append("an id given twice") }
                throw Problem.unprocessable(
                    "ids: must list each of the \(known.count) banner ids once (a permutation); "
                        + reasons.joined(separator: "; "))
            }
            revised.banners = ids.map { id in current.banners.first { $0.id == id }! }
        }
        // One banner's weight can make the whole cycle too long, its audiences too many.
        try Self.validating { () throws(FieldError) in try BannerDecoding.checkTogether(revised.banners) }
        return revised
    }

    /// Every text this request gives that may be a banner's image (a patch's every string).
    var namedImages: [String] {
        func strings(in value: JSONValue) -> [String] {
            switch value {
            case .string(let text): [text]
            case .array(let elements): elements.flatMap(strings)
            case .object(let members): members.values.flatMap(strings)
            default: []
            }
        }
        switch self {
        case .create(let definition), .replace(let definition): return definition.banners.map(\.image)
        case .addBanner(let banner, _), .replaceBanner(_, let banner): return [banner.image]
        case .patch(let patch), .patchBanner(_, let patch): return strings(in: patch)
        case .delete, .deleteBanner, .reorder: return []
        }
    }

    // MARK: Bodies

    private static func required(_ request: borrowing Request) throws(Problem) -> JSONValue {
        guard let document = try CommandBody.document(of: request) else {
            throw Problem.badRequest("missing body; send a JSON object with Content-Type: application/json")
        }
        return document
    }

    /// A merge patch: an object naming only `fields` (even to remove them: a typo must not pass).
    private static func patch(_ request: borrowing Request, fields: [String]) throws(Problem) -> JSONValue {
        let body = try required(request)
        try validating { () throws(FieldError) in try JSONFields(body).rejectUnknown(allowing: fields) }
        return body
    }

    /// A banner body for `…/banners/{id}`, whose `id` may be left out but not changed.
    private static func banner(_ body: JSONValue, id: String) throws(Problem) -> Banner {
        var body = body
        if case .object(var members) = body, members["id"] == nil {
            members["id"] = .string(id)
            body = .object(members)
        }
        let banner = try validating { () throws(FieldError) in try BannerDecoding.banner(JSONFields(body)) }
        guard banner.id == id else {
            throw Problem.unprocessable(
                "id: '\(banner.id)' differs from '\(id)' in the path; a banner cannot be renamed")
        }
        return banner
    }

    private static func position(of id: String, in definition: CarouselDefinition) throws(Problem) -> Int {
        guard let position = definition.banners.firstIndex(where: { $0.id == id }) else {
            throw Problem(status: 404, detail: "carousel '\(definition.name)' has no banner '\(id)'")
        }
        return position
    }

    /// Field errors in an admin body: 422, `path: message`, as the configuration file says them.
    private static func validating<Value>(_ body: () throws(FieldError) -> Value) throws(Problem) -> Value {
        do {
            return try body()
        } catch {
            throw Problem.unprocessable("\(error.field): \(error.message)")
        }
    }

    private static func value(of object: JSONObject) -> JSONValue {
        // Our own encoding, so it parses.
        (try? JSONParser.parse(object.bytes)) ?? .null
    }
}
