import Testing

@testable import MicroHTTP

/// `QueryString` reads a query as libmicrohttpd 0.9.75 did before the server took queries from it
/// (Fuzz/FuzzQueryString holds the decoding to libmicrohttpd's own `MHD_http_unescape`).
@Suite("Query strings")
struct QueryStringTests {
    private static func parameters(_ text: String) -> [String] {
        QueryString(bytes: Array(text.utf8)).parameters.map { "\($0.name)=\($0.value ?? "<nil>")" }
    }

    @Test(arguments: [
        ("a=1&b=2", ["a=1", "b=2"]),
        ("a", ["a=<nil>"]),
        ("a=", ["a="]),
        ("&a=1", ["=<nil>", "a=1"]),
        ("a=1&&b", ["a=1", "=<nil>", "b=<nil>"]),
        ("a=1&", ["a=1"]),
        ("", []),
        ("a=b=c", ["a=b=c"]),
        ("=v", ["=v"]),
    ])
    func parametersAreSplitAtAmpersandsAndTheFirstEquals(_ query: String, _ expected: [String]) {
        #expect(Self.parameters(query) == expected)
    }

    @Test(arguments: [
        ("caf%C3%A9", "café"),
        ("a+b", "a b"),
        ("a%2Bb", "a+b"),
        ("%41%42%43", "ABC"),
        ("%4a%4A", "JJ"),
        ("100%", "100%"),
        ("%4", "%4"),
        ("%zz", "%zz"),
        ("%+1", "% 1"),
        ("%%41", "%A"),
        ("%26", "&"),
        ("%3D", "="),
        ("%FF", "\u{FFFD}"),
    ])
    func partsAreDecodedPlusFirstThenPercent(_ part: String, _ expected: String) {
        #expect(QueryString.decoded(ArraySlice(part.utf8)) == expected)
    }

    @Test func anEncodedAmpersandOrEqualsDoesNotSplit() {
        #expect(Self.parameters("q=a%26b%3Dc&n%3Dm=1") == ["q=a&b=c", "n=m=1"])
    }

    @Test func valuesAreTheFirstOfEachNameFoundInOnePass() {
        let query = QueryString(bytes: Array("audience&screen=s1&audience=de&screen=s2".utf8))
        #expect(query.values("screen", "audience") == ("s1", nil), "the first audience has no value")
        #expect(query.values("audience", "screen") == (nil, "s1"))
        #expect(query.values("lang", "screen") == (nil, "s1"))
        #expect(query.values("Screen", "lang") == (nil, nil), "names compare exactly")
        #expect(QueryString(bytes: Array("sc%72een=a+b".utf8)).values("screen", "x") == ("a b", nil))
    }
}
