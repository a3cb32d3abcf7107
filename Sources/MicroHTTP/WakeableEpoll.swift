import CMicroHTTPD
import Glibc
import Platform

/// An epoll set and the eventfd in it that wakes its loop from another thread: what the
/// `Acceptor` and each `ReadLoop` wait on. Both are closed when the set goes, with the last of
/// those who can watch or wake it (its `EventLoop`, and the server that holds that): no wake-up
/// from a late thread can write to a descriptor number the system has since given to another file.
final class WakeableEpoll: Sendable {
    private let epollSet: FileDescriptor
    private let wakeUp: FileDescriptor

    /// The kernel refused a descriptor; `errno` says why.
    struct Failure: Error {
        let errno: Int32
    }

    /// The set with the wake-up in it, its events carrying `wakeUpToken`.
    init(wakeUpToken: UInt64) throws(Failure) {
        let set = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard set >= 0 else { throw Failure(errno: errno) }
        self.epollSet = FileDescriptor(adopting: set)
        let wakeUp = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wakeUp >= 0 else { throw Failure(errno: errno) }
        self.wakeUp = FileDescriptor(adopting: wakeUp)
        guard watch(wakeUp, token: wakeUpToken, events: EPOLLIN.rawValue) else { throw Failure(errno: errno) }
    }

    /// What `epoll_wait` waits on.
    var descriptor: Int32 { epollSet.rawValue }

    /// Adds `watched` to the set (or changes what it is watched for); false when the kernel refused.
    func watch(_ watched: Int32, token: UInt64, events: UInt32, modify: Bool = false) -> Bool {
        var event = epoll_event(events: events, data: epoll_data_t(u64: token))
        return epoll_ctl(epollSet.rawValue, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, watched, &event) == 0
    }

    func forget(_ watched: Int32) {
        _ = epoll_ctl(epollSet.rawValue, EPOLL_CTL_DEL, watched, nil)
    }

    /// Wakes the loop (from any thread).
    func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeUp.rawValue, &one, MemoryLayout<UInt64>.size)
    }

    /// Takes the wake-ups signalled so far (the loop's thread).
    func drain() {
        var count: UInt64 = 0
        _ = Glibc.read(wakeUp.rawValue, &count, MemoryLayout<UInt64>.size)
    }
}
