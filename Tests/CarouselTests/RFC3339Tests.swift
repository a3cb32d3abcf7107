import Carousel
import Testing
import TimeZones

@Suite("RFC 3339 times")
struct RFC3339Tests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (1_795_982_404_000_000_000, "2026-11-29T20:00:04.000Z"),
        (1_709_251_199_999_999_999, "2024-02-29T23:59:59.999Z"),
        (951_782_400_123_000_000, "2000-02-29T00:00:00.123Z"),
        (-1_000_000, "1969-12-31T23:59:59.999Z"),
        // The first and last instants 64 bits of nanoseconds hold.
        (Int64.min, "1677-09-21T00:12:43.145Z"),
        (Int64.max, "2262-04-11T23:47:16.854Z"),
    ])
    func formatsRFC3339WithMilliseconds(_ nanoseconds: Int64, _ text: String) {
        #expect(Timestamp(nanosecondsSinceEpoch: nanoseconds).rfc3339 == text)
    }
}

@Suite("RFC 3339 times read")
struct RFC3339ParsingTests {
    @Test(arguments: [
        ("2026-03-01T00:00:00Z", "2026-03-01T00:00:00.000Z"),
        ("2026-03-01T09:00:00+01:00", "2026-03-01T08:00:00.000Z"),
        ("2026-03-01T00:30:00-05:30", "2026-03-01T06:00:00.000Z"),
        ("2026-03-01t00:00:00.25z", "2026-03-01T00:00:00.250Z"),
        ("2024-02-29T23:59:59.999999999Z", "2024-02-29T23:59:59.999Z"),
        ("1969-12-31T23:59:59.5Z", "1969-12-31T23:59:59.500Z"),
        ("1900-01-01T00:00:00+14:00", "1899-12-31T10:00:00.000Z"),
        ("2200-12-31T23:59:59-14:00", "2201-01-01T13:59:59.000Z"),
    ])
    func readsAnyOffsetToTheMillisecond(_ text: String, _ written: String) throws {
        #expect(try #require(Timestamp(rfc3339: text)).rfc3339 == written)
    }

    @Test(arguments: [
        "", "2026-03-01", "2026-03-01T00:00:00", "2026-02-29T00:00:00Z", "2026-13-01T00:00:00Z",
        "2026-03-01T24:00:00Z", "2026-03-01T00:00:60Z", "2026-03-01T00:00:00.Z", "2026-03-01T00:00:00+0100",
        "2026-03-01T00:00:00Z ", " 2026-03-01T00:00:00Z", "+2026-03-01T00:00:00Z",
        "1899-12-31T23:59:59Z", "2201-01-01T00:00:00Z", "4664-09-06T12:56:16+18:16", "0015-05-05T04:30:05Z",
    ])
    func refusesWhatIsNotOne(_ text: String) {
        #expect(Timestamp(rfc3339: text) == nil)
    }
}
