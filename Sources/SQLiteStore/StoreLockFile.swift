import Glibc
import Platform

/// `<store>.lock`, write-locked (fcntl) for as long as this process uses the store: a SQLite
/// store belongs to one process at a time (docs/STORE.md). The lock dies with the process, even
/// on `kill -9`; a second process is told which process holds it.
final class StoreLockFile: Sendable {
    /// Held open for the process's use of the store: the lock goes when it is closed.
    private let file: FileDescriptor

    /// Takes the lock, or throws a sentence naming the store and the process holding it.
    init(storePath: String) throws(LockFailure) {
        let path = storePath + ".lock"
        var kind = F_WRLCK
        let file = try Self.open(path, kind: &kind)
        var lock = flock()
        lock.l_type = Int16(kind)
        lock.l_whence = Int16(SEEK_SET)
        if case .failure(let error) = systemCall({ fcntl(file.rawValue, F_SETLK, &lock) }) {
            let reason = error.code
            guard reason == EACCES || reason == EAGAIN else {
                throw LockFailure("cannot lock \(path): \(error)")
            }
            throw LockFailure(
                "\(storePath) is in use by \(Self.holder(of: file)); a SQLite store serves one process "
                    + "at a time: stop that one, or give this one another --store (PostgreSQL for several replicas)")
        }
        self.file = file
    }

    /// The lock file opened to be write-locked; a store this process may only read is opened to be
    /// read-locked (`kind`): a read lock still keeps out a writer, and a reader cannot harm another
    /// reader.
    private static func open(_ path: String, kind: inout Int32) throws(LockFailure) -> FileDescriptor {
        do throws(Errno) {
            return try FileDescriptor.open(path, O_RDWR | O_CREAT, permissions: 0o644)
        } catch  where error.code == EACCES || error.code == EROFS {
            kind = F_RDLCK
            do throws(Errno) {
                return try FileDescriptor.open(path, O_RDONLY)
            } catch {
                throw LockFailure("cannot open \(path): \(error)")
            }
        } catch {
            throw LockFailure("cannot open \(path): \(error)")
        }
    }

    /// `process 1234 (banner-server)`, as far as this process can see it.
    private static func holder(of file: borrowing FileDescriptor) -> String {
        var probe = flock()
        probe.l_type = Int16(F_WRLCK)
        probe.l_whence = Int16(SEEK_SET)
        guard fcntl(file.rawValue, F_GETLK, &probe) == 0, probe.l_type != Int16(F_UNLCK), probe.l_pid > 0 else {
            return "another process"
        }
        let pid = probe.l_pid
        guard case .success(let comm) = SmallFile.read("/proc/\(pid)/comm", limit: 64) else { return "process \(pid)" }
        let command = String(decoding: comm, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
        return "process \(pid) (\(command))"
    }
}

struct LockFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
