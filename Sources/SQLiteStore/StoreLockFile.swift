import Glibc
import Platform

/// `<store>.lock`, write-locked (fcntl) for as long as this process uses the store: a SQLite
/// store belongs to one process at a time (docs/STORE.md). The lock dies with the process, even
/// on `kill -9`; a second process is told which process holds it.
final class StoreLockFile: Sendable {
    private let descriptor: Int32

    /// Takes the lock, or throws a sentence naming the store and the process holding it.
    init(storePath: String) throws(LockFailure) {
        let path = storePath + ".lock"
        var descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        var kind = F_WRLCK
        if descriptor < 0 && (errno == EACCES || errno == EROFS) {
            // A store this process may only read: a read lock still keeps out a writer, and a
            // reader cannot harm another reader.
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            kind = F_RDLCK
        }
        guard descriptor >= 0 else {
            throw LockFailure("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        var lock = flock()
        lock.l_type = Int16(kind)
        lock.l_whence = Int16(SEEK_SET)
        if case .failure(let error) = systemCall({ fcntl(descriptor, F_SETLK, &lock) }) {
            let reason = error.code
            defer { close(descriptor) }
            guard reason == EACCES || reason == EAGAIN else {
                throw LockFailure("cannot lock \(path): \(String(cString: strerror(reason)))")
            }
            throw LockFailure(
                "\(storePath) is in use by \(Self.holder(of: descriptor)); a SQLite store serves one process "
                    + "at a time: stop that one, or give this one another --store (PostgreSQL for several replicas)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// `process 1234 (banner-server)`, as far as this process can see it.
    private static func holder(of descriptor: Int32) -> String {
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        guard fcntl(descriptor, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK), probe.l_pid > 0 else {
            return "another process"
        }
        let pid = probe.l_pid
        guard let file = fopen("/proc/\(pid)/comm", "r") else { return "process \(pid)" }
        defer { fclose(file) }
        var name = [CChar](repeating: 0, count: 64)
        guard fgets(&name, Int32(name.count), file) != nil else { return "process \(pid)" }
        let command = String(cString: name).split(separator: "\n").first.map(String.init) ?? ""
        return "process \(pid) (\(command))"
    }
}

struct LockFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
