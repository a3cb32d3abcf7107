import Glibc

/// An errno value that says what it is (`Connection reset by peer`), as a typed error.
public struct Errno: Error, Equatable, Sendable, CustomStringConvertible {
    public let code: Int32

    public init(_ code: Int32) {
        self.code = code
    }

    /// The socket (or pipe) has nothing for a non-blocking call now: not a failure.
    public var wouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    public var description: String { String(cString: strerror(code)) }

    /// For an operator: what it means and what to do where this service meets it (a port taken, a
    /// limit of files), with its name; `strerror`'s text and the number otherwise.
    public var explained: String {
        let known: [Int32: (String, String)] = [
            EADDRINUSE: ("EADDRINUSE", "address already in use; another process holds the port"),
            EADDRNOTAVAIL: ("EADDRNOTAVAIL", "address not available on this machine"),
            EACCES: ("EACCES", "permission denied; ports below 1024 need privileges"),
            EAFNOSUPPORT: ("EAFNOSUPPORT", "address family not supported"),
            EMFILE: ("EMFILE", "too many open files in this process"),
            ENFILE: ("ENFILE", "too many open files on this system"),
            EINVAL: ("EINVAL", "invalid argument"),
            ECONNREFUSED: ("ECONNREFUSED", "connection refused; nothing listens there"),
            ETIMEDOUT: ("ETIMEDOUT", "timed out"),
            EHOSTUNREACH: ("EHOSTUNREACH", "host unreachable"),
        ]
        guard let (name, meaning) = known[code] else { return "\(description) (errno \(code))" }
        return "\(meaning) (\(name))"
    }
}

/// Makes a system call that answers a negative number and sets errno when it fails, again for as
/// long as a signal interrupts it (EINTR): the one place that rule lives, as swift-system's
/// `valueOrErrno` loops do. Its non-negative answer, or the errno it failed with.
@inlinable
public func systemCall<Answer: SignedInteger>(_ call: () -> Answer) -> Result<Answer, Errno> {
    while true {
        let answer = call()
        if answer >= 0 { return .success(answer) }
        let code = errno
        if code != EINTR { return .failure(Errno(code)) }
    }
}
