// The hand-written JSON parser (`JSONParser`, docs/ARCHITECTURE.md "JSON") against a second
// decoder, Foundation's JSONSerialization: every document the parser takes, Foundation takes too,
// with the same values (objects, arrays, strings, booleans, null, and numbers as the nearest
// Double, within 1e-12 of it: Foundation reads an integer past 64 bits as a Decimal of 38 digits,
// whose Double may be a unit off in the last place). Where the parser refuses what Foundation takes, it must be for one of its documented
// rules, stricter than Foundation's:
// - a key twice in one object (Foundation keeps the last; which one an operator meant is unknown);
// - nesting deeper than `JSONParser.maximumDepth` (32) levels (Foundation: 512);
// - bytes that are not UTF-8: invalid sequences, or a document in UTF-16 or UTF-32, which Foundation
//   detects by its byte order mark or its zero bytes; and a lone UTF-16 surrogate in a \u escape;
// - a comma before `]` or `}` (`[1,]`, `{"a": 1,}`), which RFC 8259 does not allow and Foundation
//   takes;
// Numbers beyond Double's range (`1e400`) the parser keeps as written (a field reading them refuses
// them by its own range); Foundation refuses them, so their documents are not compared.
// And `FlatRecords` (the receipts' reader) against the parser: every document it takes, the parser
// takes, with the same records, names and values.
// Input: the document's bytes.
import Foundation
import JSON

let receiptFields = ["version", "banner", "shownAt", "offsetMs", "rttMs"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let flat = FlatRecords.read(bytes, key: "receipts", names: receiptFields)
    let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
    let ours: JSONValue
    do {
        ours = try JSONParser.parse(bytes)
    } catch {
        precondition(flat == nil, "FlatRecords took what the parser refuses (\(error)): \(printable(bytes))")
        guard foundation != nil else { return 0 }
        precondition(
            stricterByRule(error.reason, bytes), "refused what Foundation takes: \(error) in \(printable(bytes))")
        return 0
    }
    if let flat {
        precondition(
            agrees(flat, ours, key: "receipts", names: receiptFields),
            "FlatRecords read differently from the parser: \(printable(bytes))")
    }
    guard !hasNumberBeyondDouble(ours) else { return 0 }
    guard let foundation else { preconditionFailure("took what Foundation refuses: \(printable(bytes))") }
    precondition(same(ours, foundation), "read differently from Foundation: \(printable(bytes))")
    return 0
}

/// Whether the parser's refusal (`reason`) is one of the rules it is stricter by.
func stricterByRule(_ reason: String, _ bytes: [UInt8]) -> Bool {
    let rules = ["duplicate key", "nested deeper than", "UTF-8", "surrogate"]
    return rules.contains { reason.contains($0) } || bytes.contains(0) || bytes.starts(with: [0xFE, 0xFF])
        || bytes.starts(with: [0xFF, 0xFE]) || bytes.starts(with: [0xEF, 0xBB, 0xBF]) || hasTrailingComma(bytes)
}

/// Whether a comma is followed, past whitespace, by `]` or `}`.
func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
    let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    var afterComma = false
    for byte in bytes {
        if afterComma && (byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}")) { return true }
        if byte == UInt8(ascii: ",") {
            afterComma = true
        } else if !whitespace.contains(byte) {
            afterComma = false
        }
    }
    return false
}

func hasNumberBeyondDouble(_ value: JSONValue) -> Bool {
    switch value {
    case .number(let number): !number.double.isFinite
    case .array(let elements): elements.contains(where: hasNumberBeyondDouble)
    case .object(let members): members.values.contains(where: hasNumberBeyondDouble)
    default: false
    }
}

/// Whether Foundation's `other` is `value`.
func same(_ value: JSONValue, _ other: Any) -> Bool {
    switch value {
    case .null: return other is NSNull
    case .bool(let flag): return (other as? Bool) == flag
    case .string(let text): return (other as? String) == text
    case .number(let number):
        guard let read = other as? NSNumber else { return false }
        let (a, b) = (read.doubleValue, number.double)
        return a == b || abs(a - b) <= 1e-12 * max(abs(a), abs(b))
    case .array(let elements):
        guard let array = other as? [Any], array.count == elements.count else { return false }
        return zip(elements, array).allSatisfy { same($0, $1) }
    case .object(let members):
        guard let object = other as? [String: Any], object.count == members.count else { return false }
        return members.allSatisfy { key, member in object[key].map { same(member, $0) } ?? false }
    }
}

/// The input for a failure's message: printable ASCII as it is, other bytes as \xHH.
func printable(_ bytes: [UInt8]) -> String {
    bytes.prefix(400).map { (0x20...0x7E).contains($0) ? String(UnicodeScalar($0)) : String(format: "\\x%02X", $0) }
        .joined()
}

/// Whether `records` are what the parser read as `value`: one member `key`, an array of objects,
/// each with the names a record has a value for, strings alike and integers of the same value.
func agrees(_ records: [[FlatRecords.Scalar?]], _ value: JSONValue, key: String, names: [String]) -> Bool {
    guard case .object(let top) = value, top.count == 1, case .array(let elements)? = top[key],
        elements.count == records.count
    else { return false }
    for (record, element) in zip(records, elements) {
        guard case .object(let members) = element, members.count == record.count(where: { $0 != nil }) else {
            return false
        }
        for (name, scalar) in zip(names, record) {
            switch (scalar, members[name]) {
            case (nil, nil): continue
            case (.string(let read)?, .string(let parsed)?) where read == parsed: continue
            case (.integer(let read)?, .number(let parsed)?) where parsed.isIntegerLiteral && parsed.integer == read:
                continue
            default: return false
            }
        }
    }
    return true
}
