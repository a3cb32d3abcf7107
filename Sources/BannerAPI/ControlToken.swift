/// The bearer token that guards mutating requests.

struct ControlToken: Sendable {
    private let expected: [UInt8]

    init(_ token: String) {
        expected = Array(token.utf8)
    }

    /// True for `Authorization: Bearer <token>` with the right token. The comparison takes the
    /// same time wherever the first difference is, so response timing does not leak the token.
    func authorizes(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let parts = authorization.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let presented = Array(String(parts[1]).trimmingCharacters(in: " ").utf8)
        var difference = UInt8(truncatingIfNeeded: presented.count ^ expected.count)
        for offset in 0..<max(presented.count, expected.count) {
            let a = offset < presented.count ? presented[offset] : 0
            let b = offset < expected.count ? expected[offset] : 0
            difference |= a ^ b
        }
        return difference == 0 && presented.count == expected.count
    }
}
