import Carousel
import JSON

/// Banners from and to JSON, with the rules and messages every way in shares (the configuration
/// file, `import` and the admin API): each error names the field's path
/// (`banners[2].image: not an absolute http(s) URL nor a media library path (/media/ID)`).
public enum BannerDecoding {
    /// Fields of a banner object, in the order they are written.
    public static let fieldNames = ["id", "image", "caption", "link", "duration"] + ScheduleDecoding.fieldNames

    /// The banners of a `banners` array, ids unique.
    public static func banners(_ elements: [JSONValue], path: String = "banners") throws(FieldError) -> [Banner] {
        var banners: [Banner] = []
        var positions: [String: Int] = [:]
        for (position, element) in elements.enumerated() {
            let fields = try JSONFields(element, path: "\(path)[\(position)]")
            let banner = try banner(fields)
            if let first = positions.updateValue(position, forKey: banner.id) {
                throw FieldError(
                    field: fields.fieldPath("id"), message: "duplicate id '\(banner.id)' (also \(path)[\(first)])")
            }
            banners.append(banner)
        }
        return banners
    }

    /// A banner as the API and files write it: `{"id", "image", "caption", "link", "duration"}`,
    /// and its schedule fields when they are not their defaults.
    public static func json(_ banner: Banner) -> JSONObject {
        var object = JSONObject()
        object.add("id", banner.id)
        object.add("image", banner.image)
        object.add("caption", banner.caption)
        object.add("link", banner.link)
        object.add("duration", banner.duration?.seconds)
        ScheduleDecoding.add(banner.schedule, to: &object)
        return object
    }

    /// One banner object.
    public static func banner(_ fields: JSONFields) throws(FieldError) -> Banner {
        try fields.rejectUnknown(allowing: fieldNames)
        let id = try fields.required("id", .string)
        guard Validation.isBannerID(id) else {
            throw FieldError(
                field: fields.fieldPath("id"), message: "'\(id)' is not a valid id; use 1 to 64 of A-Z a-z 0-9 . _ -")
        }
        let image = try fields.required("image", .string)
        guard Validation.isAbsoluteHTTPURL(image) || MediaReference.isLibraryPath(image) else {
            throw FieldError(
                field: fields.fieldPath("image"),
                message: "not an absolute http(s) URL nor a media library path (/media/ID)")
        }
        let caption = try fields.optional("caption", .string) ?? ""
        let link = try fields.optional("link", JSONKind<String>.string.orNull) ?? nil
        if let link, !Validation.isAbsoluteHTTPURL(link) {
            throw FieldError(field: fields.fieldPath("link"), message: "not an absolute http(s) URL")
        }
        var duration: Duration?
        if let seconds = try fields.optional("duration", JSONKind<JSONNumber>.number.orNull) ?? nil {
            duration = try interval(seconds, field: fields.fieldPath("duration"))
        }
        let schedule = try ScheduleDecoding.schedule(fields)
        return Banner(id: id, image: image, caption: caption, link: link, duration: duration, schedule: schedule)
    }

    /// An interval or banner duration, within `Carousel.intervals`.
    public static func interval(_ number: JSONNumber, field: String) throws(FieldError) -> Duration {
        switch Validation.duration(seconds: number.double, within: Carousel.intervals) {
        case .success(let duration): return duration
        case .failure(let problem): throw FieldError(field: field, message: problem.message)
        }
    }
}
