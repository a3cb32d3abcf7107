import Digest
import JSON
import Media

/// An image a configuration file names by its path (docs/CONFIGURATION.md, "Images beside the
/// file"): its banners show it from the media library as `/media/ID`, and an empty store is given
/// it, with its variants, before its carousels (`StoreSeeding`).
public struct LibraryFile: Sendable, Equatable {
    /// As the file named it, resolved against the file's folder.
    public let path: String
    /// Its SHA-256, in lower-case hexadecimal: the library's id for it.
    public let id: String
    public let bytes: [UInt8]
}

/// Banner images given as files beside a configuration file: `"image": "banners/welcome.jpg"`, a
/// path relative to the file's folder, ending as an image file does (`isFilePath`). Each is
/// read, checked as an upload is (its type by its bytes, its size from its header: no decode here),
/// and named by its library path instead, so that the definition is what the store will hold.
enum LibraryFiles {
    /// `document` with every such image named by its library path, and the files read.
    static func resolve(
        _ document: JSONValue, beside configuration: String, limits: MediaLimits,
        readImage: (String) -> FileContents
    ) throws(FieldError) -> (JSONValue, [LibraryFile]) {
        guard case .object(var root) = document else { return (document, []) }
        let folder = configuration.contains("/") ? String(configuration[..<configuration.lastIndex(of: "/")!]) : "."
        var files: [LibraryFile] = []
        func banners(_ value: JSONValue?, at field: String) throws(FieldError) -> JSONValue? {
            guard case .array(var list)? = value else { return value }
            for index in list.indices {
                guard case .object(var banner) = list[index], case .string(let image)? = banner["image"],
                    isFilePath(image)
                else { continue }
                let file = try read(image, folder: folder, field: "\(field)[\(index)].image", limits, readImage)
                if !files.contains(file) { files.append(file) }
                banner["image"] = .string("/media/\(file.id)")
                list[index] = .object(banner)
            }
            return .array(list)
        }
        root["banners"] = try banners(root["banners"], at: "banners")
        if case .array(var carousels)? = root["carousels"] {
            for index in carousels.indices {
                guard case .object(var carousel) = carousels[index] else { continue }
                carousel["banners"] = try banners(carousel["banners"], at: "carousels[\(index)].banners")
                carousels[index] = .object(carousel)
            }
            root["carousels"] = .array(carousels)
        }
        return (.object(root), files)
    }

    /// A relative path to an image file: no scheme, not from the root (`/media/ID` is the library's
    /// own), and named as an image is (`.jpg`, `.png`, …). Anything else stays what it was, so that a
    /// mistyped URL is still refused by the definition's own check, naming the URL.
    static func isFilePath(_ image: String) -> Bool {
        guard !image.hasPrefix("/"), !image.contains("://"), !image.contains(" ") else { return false }
        let lowered = image.lowercased()
        return imageExtensions.contains { lowered.hasSuffix($0) && lowered.count > $0.count }
    }

    static let imageExtensions = [".jpg", ".jpeg", ".png", ".webp", ".gif", ".avif"]

    private static func read(
        _ image: String, folder: String, field: String, _ limits: MediaLimits, _ readImage: (String) -> FileContents
    ) throws(FieldError) -> LibraryFile {
        let path = folder == "." ? image : "\(folder)/\(image)"
        let bytes: [UInt8]
        switch readImage(path) {
        case .contents(let contents): bytes = contents
        case .missing:
            throw FieldError(
                field: field,
                message: "no image file \(path) (a path that is no URL is a file beside the configuration)")
        case .unreadable(let reason): throw FieldError(field: field, message: "cannot read \(path): \(reason)")
        }
        let checked = bytes.withUnsafeBytes { raw in
            Result { () throws(MediaRefusal) in try MediaProcessing.check(raw, declaredType: nil, limits: limits) }
        }
        if case .failure(let refusal) = checked {
            throw FieldError(field: field, message: "\(path) is not an image the library takes: \(refusal.message)")
        }
        return LibraryFile(path: path, id: bytes.withUnsafeBytes { SHA256.hex(of: $0) }, bytes: bytes)
    }
}
