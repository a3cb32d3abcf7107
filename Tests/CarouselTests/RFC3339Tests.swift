import Carousel
import Testing

@Suite("RFC 3339 times")
struct RFC3339Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_795_982_404_000_000_000, "2026-11-29T20:00:04.000Z"),
        (1_709_251_199_999_999_999, "2024-02-29T23:59:59.999Z"),
        (951_782_400_123_000_000, "2000-02-29T00:00:00.123Z"),
        (-1_000_000, "1969-12-31T23:59:59.999Z"),
    ])
    func formatsRFC3339WithMilliseconds(_ nanoseconds: Int64, _ text: String) {
        #expect(Timestamp(nanosecondsSinceEpoch: nanoseconds).rfc3339 == text)
    }
}
