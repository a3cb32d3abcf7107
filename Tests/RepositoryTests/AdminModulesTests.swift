import Foundation
import TestSupport
import Testing

/// The admin page's ES modules (docs/ADMIN.md) import one way, from `admin.js` down: a view that
/// must hear of another's change registers for it instead of importing it, so no two modules
/// import each other, through any number of others.
@Suite("The admin page's modules")
struct AdminModulesTests {
    static let folder = repositoryFile("Sources/WebClient/web")

    /// Each `admin*.js` and the modules it imports (`import … from "./x.js"`, `import "./x.js"`).
    static func imports() throws -> [String: [String]] {
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter {
            $0.hasPrefix("admin") && $0.hasSuffix(".js")
        }
        var graph: [String: [String]] = [:]
        for file in files {
            let text = try String(contentsOfFile: "\(folder)/\(file)", encoding: .utf8)
            graph[file] = text.split(separator: "\n").filter { $0.hasPrefix("import ") }.compactMap { line in
                guard let start = line.range(of: "\"./")?.upperBound, let end = line[start...].firstIndex(of: "\"")
                else { return nil }
                return String(line[start..<end])
            }
        }
        return graph
    }

    @Test func noModuleImportsItselfThroughOthers() throws {
        let graph = try Self.imports()
        try #require(graph.count > 10, "the admin page's modules are found")
        var cycles: [String] = []
        func visit(_ module: String, _ path: [String]) {
            for imported in graph[module] ?? [] {
                if let start = path.firstIndex(of: imported) {
                    cycles.append((path[start...] + [imported]).joined(separator: " → "))
                } else {
                    visit(imported, path + [imported])
                }
            }
        }
        for module in graph.keys.sorted() { visit(module, [module]) }
        #expect(cycles.isEmpty, "\(Set(cycles).sorted().joined(separator: "\n"))")
    }

    /// Every module is reached from the entry, `admin.js`: none is loaded by chance.
    @Test func everyModuleIsReachedFromTheEntry() throws {
        let graph = try Self.imports()
        var reached: Set<String> = ["admin.js"]
        var next = ["admin.js"]
        while let module = next.popLast() {
            for imported in graph[module] ?? [] where reached.insert(imported).inserted { next.append(imported) }
        }
        #expect(reached == Set(graph.keys), "not reached: \(Set(graph.keys).subtracting(reached).sorted())")
    }
}
