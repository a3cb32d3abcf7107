/// How a banner's `image` names an image of the media library: `/media/ID`, one of its variants
/// `/media/ID/960.webp`, or either as an absolute URL of this service.
public enum MediaReference {
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
    public static func isID(_ text: some StringProtocol) -> Bool {
        text.utf8.count == 64
            && text.utf8.allSatisfy {
                (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                    || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
            }
    }
}
