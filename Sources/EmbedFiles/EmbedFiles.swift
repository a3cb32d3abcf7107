import Foundation

/// Writes text files as Swift string literals, for the EmbedFilesPlugin (docs/ARCHITECTURE.md,
/// "Files compiled in"): `embed-files OUTPUT.swift NAME=PATH…` declares `EmbeddedFiles.NAME`, a
/// `StaticString` holding the bytes of PATH exactly.
///
/// SwiftPM's own `.embedInCode` writes an array of byte literals, which the compiler types and
/// lowers one element at a time: the OpenAPI document and the web client cost every build over two
/// minutes of one core, on the path every later module waits on. A string literal is one token.
enum EmbedFiles {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        guard let output = arguments.first else { fail("usage: embed-files OUTPUT.swift NAME=PATH…") }
        var text = "// Written by the EmbedFilesPlugin (Sources/EmbedFiles) at build time: do not edit.\n"
        text += "enum EmbeddedFiles {\n"
        for argument in arguments.dropFirst() {
            guard let equals = argument.firstIndex(of: "=") else { fail("\(argument): expected NAME=PATH") }
            let name = argument[..<equals]
            let path = String(argument[argument.index(after: equals)...])
            guard let data = FileManager.default.contents(atPath: path) else { fail("\(path): cannot be read") }
            guard let content = String(validating: data, as: UTF8.self) else {
                fail("\(path) is not UTF-8 text: only text files are embedded as string literals")
            }
            text += "    /// \(path.split(separator: "/").suffix(2).joined(separator: "/"))\n"
            text += "    static let \(name): StaticString = \"\(escaped(content))\"\n"
        }
        text += "}\n"
        // Written only when it changes: the module is not compiled again for nothing.
        if FileManager.default.contents(atPath: output) != Data(text.utf8) {
            guard FileManager.default.createFile(atPath: output, contents: Data(text.utf8)) else {
                fail("\(output): cannot be written")
            }
        }
    }

    /// `content` as the inside of a one-line string literal: every byte kept, line ends included.
    static func escaped(_ content: String) -> String {
        var result = ""
        result.reserveCapacity(content.utf8.count + content.utf8.count / 16)
        for scalar in content.unicodeScalars {
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("embed-files: \(message)\n".utf8))
        exit(1)
    }
}

#if LIBFUZZER_MAIN
    // Fuzz/ links every executable of its package with libFuzzer, whose `main` is the one there is:
    // it calls LLVMFuzzerInitialize first, where the tool does its work and exits.
    @_cdecl("LLVMFuzzerInitialize")
    func embedFilesUnderLibFuzzer(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>
    ) -> Int32 {
        EmbedFiles.main()
        exit(0)
    }

    @_cdecl("LLVMFuzzerTestOneInput")
    func neverCalled(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 { 0 }
#else
    @main extension EmbedFiles {}
#endif
