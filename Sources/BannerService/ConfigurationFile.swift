import BannerAPI
import Carousel
import JSON

/// Reads `config/carousel.json`-style files into a `ServiceConfiguration`.
enum ConfigurationFile {
    /// Applies the file's fields over `configuration`. Errors name `path` and the field.
    /// Banner images given as files beside it are read with `readImage` (`LibraryFiles`).
    static func apply(
        _ bytes: [UInt8], from path: String, to configuration: inout ServiceConfiguration,
        readImage: (String) -> FileContents = FileContents.readImage
    ) throws(ConfigurationError) {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw ConfigurationError(source: path, message: error.description)
        }
        do {
            let (resolved, files) = try LibraryFiles.resolve(
                document, beside: path, limits: configuration.media.limits, readImage: readImage)
            try apply(resolved, to: &configuration)
            configuration.libraryFiles = files
        } catch {
            throw ConfigurationError(source: path, field: error.field, message: error.message)
        }
    }

    private static func apply(_ document: JSONValue, to configuration: inout ServiceConfiguration) throws(FieldError) {
        let root = try JSONFields(document)
        try root.rejectUnknown(allowing: Setting.fields)
        for setting in Setting.all {
            guard let field = setting.field, let fromJSON = setting.fromJSON, let value = root[field] else { continue }
            try fromJSON(value, field)(&configuration)
        }
        let v1Fields = ["interval", "autoplay", "banners"].filter { root[$0] != nil }
        if root["carousels"] != nil, let v1Field = v1Fields.first {
            throw FieldError(
                field: v1Field,
                message: "a file lists its carousels, or (v1) gives interval, autoplay and banners at the top level, "
                    + "not both; move it into a carousel of 'carousels'")
        }
    }
}
