import Foundation
import TestSupport
import Testing

/// The store by what it keeps (docs/STORE.md): each aggregate in a file of its own per backend,
/// so no store file grows past what one reads at a sitting.
@Suite("Source sizes")
struct SourceSizeTests {
    static let storeModules = ["Store", "SQLiteStore", "PostgresStore"]
    static let maximumLines = 600

    @Test(arguments: storeModules)
    func noStoreFileIsLongerThan600Lines(_ module: String) throws {
        let folder = repositoryFile("Sources/\(module)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".swift") }
        try #require(!files.isEmpty)
        for file in files {
            let lines = try String(contentsOfFile: "\(folder)/\(file)", encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false
            ).count
            #expect(lines <= Self.maximumLines, "Sources/\(module)/\(file) has \(lines) lines")
        }
    }
}
