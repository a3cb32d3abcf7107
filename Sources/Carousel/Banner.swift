/// One slide of the carousel. Field formats (id pattern, absolute http(s) URLs) are checked where
/// banners enter the service; here they are plain values.
public struct Banner: Sendable, Hashable {
    public var id: String
    public var image: String
    public var caption: String
    public var link: String?
    /// How long this banner stays current; nil means the carousel's interval.
    public var duration: Duration?

    public init(id: String, image: String, caption: String = "", link: String? = nil, duration: Duration? = nil) {
        self.id = id
        self.image = image
        self.caption = caption
        self.link = link
        self.duration = duration
    }
}
