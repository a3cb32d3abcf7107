import Digest
import Logging
import Store
import Threading
import TimeZones

/// The named tokens (docs/TOKENS.md) as this process knows them, by the SHA-256 of their secret:
/// a request's bearer token is hashed once and looked up, never compared secret against secret.
/// Created and deleted through the store, which tells the other processes sharing it; each
/// process then reads them again (`reload`), so a revocation holds on every replica as soon as
/// its notification arrives.
public final class NamedTokens: Sendable {
    private let store: any CarouselStore
    private let logger: Logger
    private let known = Lock<[String: TokenRecord]>([:])

    init(store: any CarouselStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The token whose secret is `secret`, if there is one (expired or not: the caller says why
    /// it is refused).
    public func token(secret: String) -> TokenRecord? {
        let digest = Self.digest(of: secret)
        return known.withLock { $0[digest] }
    }

    /// Reads every token from the store again; when it cannot, keeps what it knew (a revocation
    /// not yet heard of is heard when the store is back: it reports `.everything`).
    func reload() {
        do throws(StoreError) {
            let tokens = try store.tokens()
            known.withLock { known in
                known = Dictionary(tokens.map { ($0.digest, $0) }, uniquingKeysWith: { first, _ in first })
            }
        } catch {
            logger.warning("could not read the named tokens from \(store.description): \(error); the ones known stay")
        }
    }

    /// The token named `name`, as this process last read them.
    public func token(named name: String) -> TokenRecord? {
        known.withLock { known in known.values.first { $0.name == name } }
    }

    /// Every token, by name, as the store has them.
    public func all() throws(StoreError) -> [TokenRecord] {
        try store.tokens()
    }

    /// A new token with a fresh secret: the record kept (its digest only) and the secret, which
    /// exists nowhere else once the answer is sent. Nil when the name is taken.
    public func create(
        name: String, role: TokenRole, carousels: [String]?, expiresAt: Timestamp?, by requester: Requester,
        at now: Timestamp
    ) throws(StoreError) -> (record: TokenRecord, secret: String)? {
        let secret = Self.newSecret()
        let record = TokenRecord(
            name: name, role: role, carousels: carousels, expiresAt: expiresAt, createdAt: now,
            createdBy: requester.actor, digest: Self.digest(of: secret))
        guard try store.saveToken(record, by: Attribution(by: requester, at: now)) else { return nil }
        known.withLock { $0[record.digest] = record }
        return (record, secret)
    }

    /// Deletes the token named `name`; false when there is none.
    public func revoke(named name: String, by requester: Requester, at now: Timestamp) throws(StoreError) -> Bool {
        let deleted = try store.deleteToken(named: name, by: Attribution(by: requester, at: now))
        known.withLock { known in known = known.filter { $0.value.name != name } }
        return deleted
    }

    /// `bct_` and 43 characters of base64url: 256 random bits, and a prefix that tells a leaked
    /// secret for what it is (secret scanners match on it).
    static func newSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return "bct_" + base64URL(bytes)
    }

    static func digest(of secret: String) -> String {
        Array(secret.utf8).withUnsafeBytes { SHA256.hex(of: $0) }
    }

    /// RFC 4648 §5, without padding.
    private static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var output: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for (offset, byte) in chunk.enumerated() { value |= Int(byte) << (16 - 8 * offset) }
            for position in 0...chunk.count { output.append(alphabet[(value >> (18 - 6 * position)) & 63]) }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }
}
