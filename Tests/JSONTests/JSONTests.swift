import JSON
import Testing

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
        guard case .number(let fraction) = try JSONParser.parse(Array("2.0".utf8)) else {
            Issue.record("2.0 is not a number")
            return
        }
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

@Suite("JSON writer")
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
}
