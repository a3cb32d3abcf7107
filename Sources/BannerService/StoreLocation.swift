import Definitions
import PostgresStore
import SQLiteStore
import Store

/// Where the carousels are kept (`--store`, `CAROUSEL_STORE`; docs/CONFIGURATION.md).
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// Nothing survives the process: tests and benchmarks.
    case memory
    /// A SQLite file, created with its folder when missing.
    case sqlite(path: String)
    /// A PostgreSQL database several replicas share, by its libpq URI.
    case postgres(uri: String)

    /// The embedded default, under the working directory.
    public static let defaultPath = "data/carousel.db"

    /// `memory`, `postgres://…` (or `postgresql://…`), `sqlite:PATH` or a plain PATH.
    static func parse(_ text: String) throws(FieldProblem) -> StoreLocation {
        if text == "memory" { return .memory }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") { return .postgres(uri: text) }
        let path = text.hasPrefix("sqlite:") ? String(text.dropFirst("sqlite:".count)) : text
        guard !path.isEmpty else {
            throw FieldProblem("'\(text)' names no file; use memory, sqlite:PATH, a file path or postgres://…")
        }
        return .sqlite(path: path)
    }

    public var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let uri): PostgresStore.redacted(uri)
        }
    }

    /// Opens the store (creating a SQLite file when missing; a PostgreSQL store that cannot be
    /// reached yet is waited for).
    public func open() throws(StoreError) -> any CarouselStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite(let path): try SQLiteStore(path: path)
        case .postgres(let uri): try PostgresStore(uri: uri)
        }
    }
}
