import Foundation

/// A fresh, empty temporary directory.
public func temporaryDirectory() throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("carousel-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// A file in a fresh temporary directory, for configurations written by a test.
public func temporaryFile(named name: String = "carousel.json", contents: String) throws -> URL {
    let file = try temporaryDirectory().appendingPathComponent(name)
    try contents.write(to: file, atomically: true, encoding: .utf8)
    return file
}

/// The text of a file, read with plain `read(2)`; nil when it cannot be read.
///
/// FoundationEssentials' `String(contentsOfFile:)` leaks its buffer for a file that is empty or
/// whose size `stat` does not tell (`/proc`), which fails AddressSanitizer's leak check.
public func textOfFile(atPath path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var contents: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 16 * 1024)
    while true {
        let count = read(descriptor, &chunk, chunk.count)
        if count < 0 && errno == EINTR { continue }
        guard count >= 0 else { return nil }
        if count == 0 { return String(decoding: contents, as: UTF8.self) }
        contents.append(contentsOf: chunk[..<count])
    }
}
