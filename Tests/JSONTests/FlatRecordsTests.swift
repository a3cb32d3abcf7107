import JSON
import Testing

/// The receipts' reader (`FlatRecords`) takes a strict subset of what `JSONParser` takes, and reads
/// it the same; anything else is nil, for the parser. `FuzzJSON` holds the same property over
/// libFuzzer's inputs.
@Suite("Flat records")
struct FlatRecordsTests {
    static let names = ["version", "banner", "shownAt", "offsetMs", "rttMs"]
    static let receipt = #"{"version":12,"banner":"spring-sale","shownAt":"2026-12-07T19:00:00.125Z","offsetMs":-3}"#

    static func read(_ text: String) -> [[FlatRecords.Scalar?]]? {
        FlatRecords.read(Array(text.utf8), key: "receipts", names: names)
    }

    @Test func readsTheShapeThePageSends() {
        let records = Self.read(
            #" { "receipts" : [ "# + Self.receipt + #", {"banner": "b", "version": 0, "shownAt": "t"} ] }"#)
        #expect(
            records == [
                [.integer(12), .string("spring-sale"), .string("2026-12-07T19:00:00.125Z"), .integer(-3), nil],
                [.integer(0), .string("b"), .string("t"), nil, nil],
            ])
        #expect(Self.read(#"{"receipts":[]}"#) == [])
        #expect(Self.read(#"{"receipts":[{}]}"#) == [[nil, nil, nil, nil, nil]])
        #expect(
            Self.read(#"{"receipts":[{"version":999999999999999999}]}"#) == [
                [.integer(999_999_999_999_999_999), nil, nil, nil, nil]
            ])
    }

    @Test(arguments: [
        #"{"receipts":[{"version":1.0}]}"#, #"{"receipts":[{"version":1e2}]}"#, #"{"receipts":[{"version":01}]}"#,
        #"{"receipts":[{"version":-}]}"#, #"{"receipts":[{"version":1234567890123456789}]}"#,
        #"{"receipts":[{"version":99999999999999999999}]}"#, #"{"receipts":[{"version":-99999999999999999999}]}"#,
        #"{"receipts":[{"version":null}]}"#, #"{"receipts":[{"version":true}]}"#,
        #"{"receipts":[{"banner":"a\"b"}]}"#, #"{"receipts":[{"banner":"é"}]}"#, #"{"receipts":[{"banner":"a"#,
        #"{"receipts":[{"banner":"a","banner":"b"}]}"#, #"{"receipts":[{"other":1}]}"#,
        #"{"receipts":[{"banner":["a"]}]}"#, #"{"receipts":[{"version":1},]}"#, #"{"receipts":[{"version":1,}]}"#,
        #"{"receipts":[{"version":1}],"more":1}"#, #"{"other":[]}"#, #"{"receipts":[]} x"#, #"["receipts"]"#, "",
    ])
    func anythingElseIsLeftToTheParser(_ text: String) {
        #expect(Self.read(text) == nil)
    }

    /// Thousands of near misses of a valid body (a byte changed, dropped or doubled): whatever the
    /// reader takes, the parser takes with the same values.
    @Test func whatItTakesTheParserReadsTheSame() throws {
        let valid = Array((#"{"receipts": [ "# + Self.receipt + ", " + Self.receipt + "]}").utf8)
        let alphabet = Array(#"{}[]:,"\ -.eE0123456789abtx"#.utf8) + [0x09, 0x0A, 0xC3]
        var generator = SystemRandomNumberGenerator()
        var taken = 0
        for _ in 0..<20_000 {
            var bytes = valid
            for _ in 0...Int.random(in: 0...2, using: &generator) {
                let at = Int.random(in: 0..<bytes.count, using: &generator)
                switch Int.random(in: 0..<3, using: &generator) {
                case 0: bytes[at] = alphabet.randomElement(using: &generator)!
                case 1: bytes.remove(at: at)
                default: bytes.insert(bytes[at], at: at)
                }
            }
            guard let records = FlatRecords.read(bytes, key: "receipts", names: Self.names) else { continue }
            taken += 1
            let text = String(decoding: bytes, as: UTF8.self)
            let parsed = try #require(try? JSONParser.parse(bytes), "the parser refuses what the reader took: \(text)")
            #expect(Self.agrees(records, parsed), "read differently: \(text)")
        }
        #expect(taken > 100, "the near misses include bodies the reader takes")
    }

    static func agrees(_ records: [[FlatRecords.Scalar?]], _ value: JSONValue) -> Bool {
        guard case .object(let top) = value, top.count == 1, case .array(let elements)? = top["receipts"],
            elements.count == records.count
        else { return false }
        return zip(records, elements).allSatisfy { record, element in
            guard case .object(let members) = element, members.count == record.count(where: { $0 != nil }) else {
                return false
            }
            return zip(names, record).allSatisfy { name, scalar in
                switch (scalar, members[name]) {
                case (nil, nil): true
                case (.string(let read)?, .string(let parsed)?): read == parsed
                case (.integer(let read)?, .number(let parsed)?): parsed.isIntegerLiteral && parsed.integer == read
                default: false
                }
            }
        }
    }
}
