import Definitions
import JSON
import Threading

/// Definitions decoded from their stored JSON, kept by serial and revision. A write reads its
/// carousel's row in its transaction (another process may have changed it), and decoding the
/// same definition again for every command would cost more than the write itself.
public final class DecodedDefinitions: Sendable {
    private let decoded = Lock<[Int64: (revision: UInt64, definition: CarouselDefinition)]>([:])

    public init() {}

    /// The definition stored as `text` for carousel `serial` at `revision`; `store` names the
    /// store in the message when the text cannot be read. Kept for the next write unless
    /// `keeping` is false: a read of every row (a start, a scan) would keep a copy of every
    /// carousel that few writes will need (docs/PERFORMANCE.md, memory per carousel).
    public func definition(
        serial: Int64, revision: UInt64, name: String, text: String, store: String, keeping: Bool = true
    ) throws(StoreError) -> CarouselDefinition {
        if let known = decoded.withLock({ $0[serial] }), known.revision == revision { return known.definition }
        let definition = try Self.decode(text, of: "the stored definition of carousel '\(name)'", store: store)
        if keeping { remember(definition, serial: serial, revision: revision) }
        return definition
    }

    /// A definition's stored text decoded; `what` and `store` name it in the message when it
    /// cannot be read.
    public static func decode(_ text: String, of what: String, store: String) throws(StoreError)
        -> CarouselDefinition
    {
        do {
            return try CarouselDefinition.decode(JSONParser.parse(Array(text.utf8)))
        } catch {
            throw .unusable("\(store): \(what) cannot be read: \(error)")
        }
    }

    /// `definition`, just written for carousel `serial` at `revision`.
    public func remember(_ definition: CarouselDefinition, serial: Int64, revision: UInt64) {
        decoded.withLock { $0[serial] = (revision, definition) }
    }

    /// Carousel `serial` was deleted.
    public func forget(serial: Int64) {
        decoded.withLock { _ = $0.removeValue(forKey: serial) }
    }
}

extension CarouselDefinition {
    /// The compact JSON text a store keeps.
    public var storedText: String { String(decoding: json().bytes, as: UTF8.self) }
}
