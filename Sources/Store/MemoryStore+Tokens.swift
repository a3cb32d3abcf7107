import Carousel
import Definitions
import Threading
import TimeZones

extension MemoryStore: TokenStore {
    public func saveToken(_ token: TokenRecord, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.tokens[token.name] == nil else { return false }
            contents.tokens[token.name] = token
            contents.append([AuditEntry(.createToken, attribution, target: token.name)])
            return true
        }
    }

    public func tokens() throws(StoreError) -> [TokenRecord] {
        contents.withLock { $0.tokens.values.sorted { $0.name < $1.name } }
    }

    public func deleteToken(named name: String, by attribution: Attribution) throws(StoreError) -> Bool {
        contents.withLock { contents in
            guard contents.tokens.removeValue(forKey: name) != nil else { return false }
            contents.append([AuditEntry(.revokeToken, attribution, target: name)])
            return true
        }
    }
}
