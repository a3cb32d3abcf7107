import Carousel
import JSON

/// Banners from and to JSON, with the rules and messages every way in shares (the configuration
/// file, `import` and the admin API): each error names the field's path
/// (`banners[2].image: not an absolute http(s) URL nor a media library path (/media/ID)`).
public enum BannerDecoding {
    /// Fields of a banner object, in the order they are written.
    public static let fieldNames =
        ["id", "image", "caption", "link", "duration", "weight", "audiences"] + ScheduleDecoding.fieldNames

    /// The most work a weighted cycle may take to compute: banners × the sum of their weights
    /// (docs/WEIGHTS.md). A hundred banners of weight 100 fit; equal weights cost nothing.
    public static let maximumCycleWork = 1_000_000

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
        try checkTogether(banners, path: path)
        return banners
    }

    /// The rules on the banners together: weights whose cycle would cost more than
    /// `maximumCycleWork` to compute, more than `Audiences.maximumPerCarousel` audiences.
    public static func checkTogether(_ banners: [Banner], path: String = "banners") throws(FieldError) {
        try checkCycle(of: banners, path: path)
        let audiences = Audiences.named(by: banners)
        guard audiences.count > Audiences.maximumPerCarousel else { return }
        throw FieldError(
            field: path,
            message: "the banners name \(audiences.count) audiences; a carousel may have at most "
                + "\(Audiences.maximumPerCarousel) (use fewer audiences, or a carousel per group of them)")
    }

    private static func checkCycle(of banners: [Banner], path: String) throws(FieldError) {
        guard let first = banners.first?.weight, banners.contains(where: { $0.weight != first }) else { return }
        let total = banners.reduce(0) { $0 + $1.weight }
        guard banners.count * total > maximumCycleWork else { return }
        throw FieldError(
            field: path,
            message: "\(banners.count) banners with weights adding up to \(total) make a cycle too long to "
                + "compute (banners × total weight at most \(maximumCycleWork)); use fewer banners or smaller weights")
    }

    /// A banner as the API and files write it: `{"id", "image", "caption", "link", "duration"}`,
    /// its `weight` unless 1, its `audiences` unless none, and its schedule fields when they are
    /// not their defaults.
    public static func json(_ banner: Banner) -> JSONObject {
        var object = JSONObject()
        object.add("id", banner.id)
        object.add("image", banner.image)
        object.add("caption", banner.caption)
        object.add("link", banner.link)
        object.add("duration", banner.duration?.seconds)
        if banner.weight != 1 { object.add("weight", banner.weight) }
        if !banner.audiences.isEmpty { object.add("audiences", banner.audiences) }
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
        var weight = 1
        if let number = try fields.optional("weight", .integer) {
            guard let value = Int(number.literal), Banner.weights.contains(value) else {
                throw FieldError(
                    field: fields.fieldPath("weight"),
                    message: "\(number.literal) is out of range; use a whole number from "
                        + "\(Banner.weights.lowerBound) to \(Banner.weights.upperBound) (turns per cycle)")
            }
            weight = value
        }
        let schedule = try ScheduleDecoding.schedule(fields)
        return Banner(
            id: id, image: image, caption: caption, link: link, duration: duration, schedule: schedule, weight: weight,
            audiences: try audiences(fields))
    }

    /// A banner's `audiences`: names as screen ids, each once; `[]` (or none) for every audience.
    private static func audiences(_ fields: JSONFields) throws(FieldError) -> [String] {
        guard let elements = try fields.optional("audiences", .array) else { return [] }
        var names: [String] = []
        for (offset, element) in elements.enumerated() {
            let path = "\(fields.fieldPath("audiences"))[\(offset)]"
            guard case .string(let name) = element else {
                throw FieldError(field: path, message: "must be a string, got \(element.kindDescription)")
            }
            guard Audiences.isValidName(name) else {
                throw FieldError(field: path, message: "'\(name.prefix(80))' is not a valid name; \(Audiences.rule)")
            }
            guard !names.contains(name) else { throw FieldError(field: path, message: "'\(name)' is listed twice") }
            names.append(name)
        }
        return names
    }

    /// An interval or banner duration, within `Carousel.intervals`.
    public static func interval(_ number: JSONNumber, field: String) throws(FieldError) -> Duration {
        switch Validation.duration(seconds: number.double, within: Carousel.intervals) {
        case .success(let duration): return duration
        case .failure(let problem): throw FieldError(field: field, message: problem.message)
        }
    }
}
