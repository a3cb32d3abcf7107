import Foundation
import TestSupport
import Testing

/// docs/ARCHITECTURE.md's module table is Package.swift's: the same modules in the same order,
/// each using what Package.swift says it does; every module uses only modules above it; and no
/// source imports a module of this package that its target does not declare.
@Suite("The module table")
struct ModuleTableTests {
    struct Target {
        let name: String
        let type: String
        let dependencies: [String]
    }

    /// Package.swift as SwiftPM reads it (`swift package dump-package`), targets in declared order.
    /// In a scratch folder of its own: `swift test` holds the package's `.build` while it runs.
    static func package() async throws -> [Target] {
        let root = repositoryFile("")
        let scratch = try temporaryDirectory().path
        let (status, output) = try await offThePool {
            try shellOutput(
                "cd \(shellQuoted(root)) && swift package --scratch-path \(shellQuoted(scratch)) dump-package 2>&1")
        }
        try #require(status == 0, "swift package dump-package failed: \(output)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any])
        let targets = try #require(json["targets"] as? [[String: Any]])
        return targets.map { target in
            let dependencies = (target["dependencies"] as? [[String: Any]] ?? []).compactMap { dependency in
                (dependency.values.first as? [Any])?.first as? String
            }
            return Target(
                name: target["name"] as? String ?? "", type: target["type"] as? String ?? "",
                dependencies: dependencies)
        }
    }

    /// The rows of the table under "## Modules": module, and the modules it uses ("—": none).
    static func documented() throws -> [(module: String, uses: [String])] {
        let text = try String(contentsOfFile: repositoryFile("docs/ARCHITECTURE.md"), encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Modules\n").dropFirst().first)
        let rows = section.split(separator: "\n").drop { !$0.hasPrefix("| module |") }.dropFirst(2)
            .prefix { $0.hasPrefix("|") }
        return rows.map { row in
            let cells = row.split(separator: "|", omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let names = { (cell: String) in
                cell.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["`"]) }
                    .filter { !$0.isEmpty && $0 != "—" }
            }
            return (names(cells[1]).first ?? "", names(cells[2]))
        }
    }

    @Test func theTableIsPackageSwifts() async throws {
        let modules = try await Self.package().filter { $0.type != "test" && $0.name != "TestSupport" }
        let rows = try Self.documented()
        #expect(rows.map(\.module) == modules.map(\.name), "the modules, in Package.swift's order")
        for (row, module) in zip(rows, modules) where row.module == module.name {
            #expect(Set(row.uses) == Set(module.dependencies), "\(module.name) uses")
        }
    }

    /// A module uses only modules declared above it: the arrows never point back up.
    @Test func everyModuleUsesOnlyModulesAboveIt() async throws {
        var above: Set<String> = []
        for target in try await Self.package() where target.type != "test" {
            for dependency in target.dependencies {
                #expect(above.contains(dependency), "\(target.name) uses \(dependency), declared below it")
            }
            above.insert(target.name)
        }
    }

    /// Every `import` of one of this package's modules is a dependency its target declares (a
    /// module reached only through another's dependencies is drift waiting to happen).
    @Test func everyImportIsDeclared() async throws {
        let targets = try await Self.package()
        let names = Set(targets.map(\.name))
        var undeclared: [String] = []
        for target in targets where target.type != "system" {
            let folder =
                target.type == "test" || target.name == "TestSupport"
                ? "Tests/\(target.name)" : "Sources/\(target.name)"
            let files =
                FileManager.default.enumerator(atPath: repositoryFile(folder))?
                .compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") } ?? []
            try #require(!files.isEmpty, "\(folder) has Swift sources")
            for file in files.sorted() {
                let text = try String(contentsOfFile: repositoryFile("\(folder)/\(file)"), encoding: .utf8)
                for imported in Self.imports(in: text)
                where names.contains(imported) && imported != target.name && !target.dependencies.contains(imported) {
                    undeclared.append("\(folder)/\(file) imports \(imported), which \(target.name) does not declare")
                }
            }
        }
        #expect(undeclared.isEmpty, "\n\(undeclared.joined(separator: "\n"))")
    }

    /// The modules a Swift file imports (`import X`, `@testable import X`, `public import X`).
    static func imports(in text: String) -> [String] {
        text.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count,
                words[..<index].allSatisfy({ $0.hasPrefix("@") || ["public", "internal", "package"].contains($0) })
            else { return nil }
            return String(words[index + 1])
        }
    }
}
