import Glibc

/// An open file descriptor and the duty to close it. Noncopyable, so it has one owner at a time
/// and is closed exactly once: by `close()`, or when its owner lets it go unclosed (a scope ends,
/// the object holding it goes) — unless `release()` hands the duty to something else
/// (libmicrohttpd closes what it is given). `rawValue` is lent to system calls; nothing else
/// closes it, so its number is never closed twice, nor used after another file took it.
public struct FileDescriptor: ~Copyable, Sendable {
    public let rawValue: Int32

    /// Takes over `rawValue`, as `open`, `socket`, `epoll_create1` and the like answered it (≥ 0).
    public init(adopting rawValue: Int32) {
        precondition(rawValue >= 0, "a descriptor is never negative; check the call that made it")
        self.rawValue = rawValue
    }

    /// `open(2)`, close-on-exec (no child inherits it); EINTR retried.
    public static func open(_ path: String, _ flags: Int32, permissions: mode_t = 0) throws(Errno) -> FileDescriptor {
        switch systemCall({ Glibc.open(path, flags | O_CLOEXEC, permissions) }) {
        case .success(let raw): return FileDescriptor(adopting: raw)
        case .failure(let error): throw error
        }
    }

    /// Closes it now. Not retried on EINTR: Linux has released the number by then, and a second
    /// `close` could close a descriptor another thread just opened.
    public consuming func close() {
        _ = Glibc.close(rawValue)
        discard self
    }

    /// Hands the duty to close it to the caller, who gives the number to whatever closes it.
    public consuming func release() -> Int32 {
        let raw = rawValue
        discard self
        return raw
    }

    deinit {
        _ = Glibc.close(rawValue)
    }
}

/// A pipe's two ends, each closed exactly once: what one thread writes to wake another blocked in
/// `poll`. Both ends close-on-exec (set just after `pipe`: `pipe2` needs _GNU_SOURCE, which Swift's
/// Glibc module does not define; this process starts its children before it makes pipes).
@frozen public struct Pipe: ~Copyable, Sendable {
    public let read: FileDescriptor
    public let write: FileDescriptor

    public init() throws(Errno) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { throw Errno(errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        read = FileDescriptor(adopting: ends[0])
        write = FileDescriptor(adopting: ends[1])
    }
}
