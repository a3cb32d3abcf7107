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
