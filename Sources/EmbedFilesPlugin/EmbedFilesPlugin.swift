import Foundation
import PackagePlugin

/// Compiles a target's text files into it as string literals (docs/ARCHITECTURE.md, "Files
/// compiled in"): every file under the target's `web` and `Resources` folders becomes
/// `EmbeddedFiles.NAME` (`app.js`: `app_js`), written by the `EmbedFiles` tool whenever one of
/// them changes. The target excludes those folders, so that SwiftPM leaves them to this plugin.
@main
struct EmbedFilesPlugin: BuildToolPlugin {
    static let folders = ["web", "Resources"]

    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        var files: [URL] = []
        for folder in Self.folders {
            let directory = target.directoryURL.appending(path: folder)
            guard
                let walk = FileManager.default.enumerator(
                    at: directory, includingPropertiesForKeys: [.isRegularFileKey])
            else { continue }
            for case let url as URL in walk
            where (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true {
                files.append(url)
            }
        }
        files.sort { $0.path < $1.path }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedFiles.swift")
        let names = files.map { file in
            String(file.lastPathComponent.map { $0.isLetter || $0.isNumber ? $0 : "_" })
        }
        return [
            .buildCommand(
                displayName: "Embedding \(files.count) files in \(target.name)",
                executable: try context.tool(named: "EmbedFiles").url,
                arguments: [output.path] + zip(names, files).map { "\($0)=\($1.path)" },
                inputFiles: files, outputFiles: [output])
        ]
    }
}
