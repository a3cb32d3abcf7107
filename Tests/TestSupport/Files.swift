import Foundation

/// A fresh, empty temporary directory, inside this test process's own folder.
public func temporaryDirectory() throws -> URL {
    let directory = try testFolder.get().appendingPathComponent(UUID().uuidString)
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    return directory
}

/// The folder that holds every temporary directory of this test process, removed when the
/// process ends, however it ends: its `Watcher` reads a pipe whose other end only this process
/// holds. Tests left their folders behind before, and PostgreSQL's (databases of
/// 8 MB each) filled a CI machine's disk. The shell first lets the PostgreSQL servers in the
/// folder finish their shutdown (each removes its postmaster.pid last; their own watchers stop
/// them at the same moment) and unmounts the tmpfs a store-failure test may have left mounted.
private let testFolder: Result<URL, any Error> = Result {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("carousel-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let quoted = shellQuoted(folder.path)
    let cleanUp = """
        trap '' INT HUP TERM; read line
        waited=0
        while ls \(quoted)/*/data/postmaster.pid > /dev/null 2>&1 && [ $waited -lt 600 ]; do
            sleep 0.1; waited=$((waited + 1))
        done
        awk -v folder=\(quoted)/ 'index($2, folder) == 1 { print $2 }' /proc/mounts | sort -r |
            while read mount; do umount -l "$mount"; done
        rm -rf \(quoted)
        """
    // Never ended: its pipe stays open for this process's whole life.
    guard Watcher(cleanUp) != nil else { throw POSIXError(.ECHILD) }
    return folder
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
