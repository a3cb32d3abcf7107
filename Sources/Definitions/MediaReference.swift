/// How a banner's `image` names an image of the media library (docs/MEDIA.md): `/media/ID`, one
/// of its variants `/media/ID/960.webp`, or either as an absolute URL of this service. The one
/// statement of that grammar: banner validation, the routes and the library all read it here.
public enum MediaReference {
    /// The widths of the WebP variants made of every upload, none wider than the original.
    public static let variantWidths = [480, 960, 1600, 2400]

    /// Whether `text` is a library path itself (`/media/ID` or `/media/ID/WIDTH.webp`), as a banner's
    /// `image` may be.
    public static func isLibraryPath(_ text: String) -> Bool { file(atPath: text) != nil }

    /// The image a library path names and which of its files: the original (`/media/ID`, width
    /// nil) or a variant (`/media/ID/960.webp`); nil for any other text. Read on the UTF-8 bytes:
    /// the routes ask it of every `GET /media/…`, and splitting into Characters cost as much as
    /// sending the file.
    public static func file(atPath path: String) -> (id: String, width: Int?)? {
        let bytes = path.utf8
        guard bytes.starts(with: "/media/".utf8) else { return nil }
        let idStart = bytes.index(bytes.startIndex, offsetBy: "/media/".utf8.count)
        let idEnd = bytes[idStart...].firstIndex(of: UInt8(ascii: "/")) ?? bytes.endIndex
        let id = path[idStart..<idEnd]
        guard isID(id) else { return nil }
        guard idEnd < bytes.endIndex else { return (String(id), nil) }
        let file = bytes[bytes.index(after: idEnd)...]
        guard let width = variantFiles.first(where: { file.elementsEqual($0.name.utf8) })?.width else { return nil }
        return (String(id), width)
    }

    /// `960.webp` and the like: the names of a library image's variants.
    private static let variantFiles = variantWidths.map { (width: $0, name: "\($0).webp") }

    /// The id an image URL names, or nil when it names no library image.
    public static func id(inImage image: String) -> String? {
        var path = Substring(image)
        for scheme in ["http://", "https://"] where path.hasPrefix(scheme) {
            let afterScheme = path.dropFirst(scheme.count)
            guard let slash = afterScheme.firstIndex(of: "/") else { return nil }
            path = afterScheme[slash...]
        }
        guard path.hasPrefix("/media/") else { return nil }
        let rest = path.dropFirst("/media/".count)
        let id = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        return isID(id) ? String(id) : nil
    }

    /// Whether `text` has the form of an id: 64 lowercase hexadecimal digits (a SHA-256).
    /// Inlinable, so that it is specialised where it is called: every `GET /media/…` asks it, and
    /// the generic version walked the bytes through witness tables.
    @inlinable
    public static func isID(_ text: some StringProtocol) -> Bool {
        var count = 0
        for byte in text.utf8 {
            guard
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            else { return false }
            count += 1
        }
        return count == 64
    }
}
