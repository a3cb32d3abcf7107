import Definitions
import SQLiteStore
import Store

/// Where the carousels are kept (`--store`, `CAROUSEL_STORE`; docs/CONFIGURATION.md).
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    /// Nothing survives the process: tests and benchmarks.
    case memory
    /// A SQLite file, created with its folder when missing.
    case sqlite(path: String)

    /// The embedded default, under the working directory.
    public static let defaultPath = "data/carousel.db"

    /// `memory`, `sqlite:PATH` or a plain PATH.
    static func parse(_ text: String) throws(FieldProblem) -> StoreLocation {
        if text == "memory" { return .memory }
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") {
            throw FieldProblem(
                "PostgreSQL stores are not available in this build yet; use memory, sqlite:PATH or a file path")
        }
        let path = text.hasPrefix("sqlite:") ? String(text.dropFirst("sqlite:".count)) : text
        guard !path.isEmpty else {
            throw FieldProblem("'\(text)' names no file; use memory, sqlite:PATH or a file path")
        }
        return .sqlite(path: path)
    }

    public var description: String {
        switch self {
        case .memory: "memory"
        case .sqlite(let path): "sqlite:\(path)"
        }
    }

    /// Opens the store (creating a SQLite file when missing).
    public func open() throws(StoreError) -> any CarouselStore {
        switch self {
        case .memory: MemoryStore()
        case .sqlite(let path): try SQLiteStore(path: path)
        }
    }
}
