import Carousel
import Testing

@testable import BannerService

@Suite("JSON parser")
struct JSONParserTests {
    @Test func parsesEveryKindOfValue() throws {
        let value = try JSONParser.parse(
            Array(#" {"a": [1, -2.5e3, true, false, null], "b": "x\"\u00e9\ud83d\ude00\n"} "#.utf8))
        let expected: JSONValue = .object([
            "a": .array([
                .number(JSONNumber(literal: "1")), .number(JSONNumber(literal: "-2.5e3")), .bool(true), .bool(false),
                .null,
            ]),
            "b": .string("x\"é😀\n"),
        ])
        #expect(value == expected)
    }

    @Test func numbersKeepTheirLiteral() throws {
        guard case .number(let big) = try JSONParser.parse(Array("123456789012345678901234567890".utf8)) else {
            Issue.record("not a number")
            return
        }
        #expect(big.isIntegerLiteral)
        #expect(big.integer == nil, "too large for Int")
        guard case .number(let fraction) = try JSONParser.parse(Array("2.0".utf8)) else { return }
        #expect(!fraction.isIntegerLiteral)
        #expect(fraction.double == 2)
    }

    @Test(arguments: [
        ("", "line 1, column 1: unexpected end of input, expected a value"),
        ("{\"a\": }", "line 1, column 7: unexpected character '}', expected a value"),
        ("{\n  \"a\": 1,\n  \"a\": 2\n}", "line 3, column 3: duplicate key \"a\""),
        ("[1, 2", "line 1, column 6: expected ',' or ']' in an array"),
        ("{\"a\" 1}", "line 1, column 6: expected ':' after the key \"a\""),
        ("{a: 1}", "line 1, column 2: expected a string key in quotes"),
        ("[1] x", "line 1, column 5: unexpected content after the JSON value"),
        ("01", "line 1, column 2: unexpected content after the JSON value"),
        ("1.", "line 1, column 3: expected a digit after the decimal point"),
        ("-", "line 1, column 2: expected a digit"),
        ("\"abc", "line 1, column 1: unterminated string"),
        ("\"\\x\"", "line 1, column 4: invalid escape \\'x'"),
        ("\"\\ud800\"", "line 1, column 8: lone UTF-16 surrogate in \\u escape"),
        ("\"a\tb\"", "line 1, column 3: control character 0x9 in a string; escape it"),
        ("tru", "line 1, column 1: unexpected characters, expected true"),
    ])
    func rejectsMalformedInputWithItsPosition(_ input: String, _ message: String) {
        do {
            _ = try JSONParser.parse(Array(input.utf8))
            Issue.record("accepted \(input)")
        } catch {
            #expect(error.description == "invalid JSON at \(message)")
        }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func limitsNesting() {
        let deep = String(repeating: "[", count: 33) + String(repeating: "]", count: 33)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(deep.utf8)) }
        let allowed = String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
        #expect(throws: Never.self) { try JSONParser.parse(Array(allowed.utf8)) }
    }

    @Test func survivesHostileNestingWithoutCrashing() {
        let hostile = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(hostile.utf8)) }
    }
}

@Suite("JSON writer and times")
struct JSONWriterTests {
    @Test func writesFieldsInOrderWithEscapes() {
        var object = JSONObject()
        object.add("text", "quote\" backslash\\ newline\n tab\t bell\u{07} é")
        object.add("int", 42)
        object.add("double", 0.25)
        object.add("whole", 4.0)
        object.add("flag", true)
        object.add("nothing", String?.none)
        object.add("list", [1, 2])
        #expect(
            String(decoding: object.bytes, as: UTF8.self)
                == #"{"text":"quote\" backslash\\ newline\n tab\t bell\u0007 é","int":42,"double":0.25,"whole":4.0,"flag":true,"nothing":null,"list":[1,2]}"#
        )
    }

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

@Suite("Field validation")
struct ValidationTests {
    @Test(arguments: ["welcome", "spring-sale", "a.b_c-1", String(repeating: "x", count: 64)])
    func acceptsValidIDs(_ id: String) {
        #expect(Validation.isBannerID(id))
    }

    @Test(arguments: ["", "with space", "ümlaut", "slash/", String(repeating: "x", count: 65)])
    func refusesInvalidIDs(_ id: String) {
        #expect(!Validation.isBannerID(id))
    }

    @Test(arguments: [
        "https://cdn.example.com/a.png", "http://localhost:8080/x?y=1#z", "HTTPS://EXAMPLE.COM",
        "https://user@host.example/path", "http://[::1]:8080/",
    ])
    func acceptsAbsoluteHTTPURLs(_ url: String) {
        #expect(Validation.isAbsoluteHTTPURL(url))
    }

    @Test(arguments: [
        "", "cdn.example.com/a.png", "/relative.png", "ftp://example.com/a", "https://", "https:///path",
        "https://exa mple.com", "javascript:alert(1)", "https://example.com/é", "https://<script>/",
        "https://" + String(repeating: "a", count: 2048),
    ])
    func refusesEverythingElse(_ url: String) {
        #expect(!Validation.isAbsoluteHTTPURL(url))
    }
}
