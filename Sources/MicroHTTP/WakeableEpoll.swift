import CMicroHTTPD
import Glibc

/// An epoll set and the eventfd in it that wakes its loop from another thread: what the
/// `Acceptor` and each `ReadLoop` wait on. Owned by one of them, which closes it once its loop has
/// ended.
struct WakeableEpoll {
    let descriptor: Int32
    private let wakeUp: Int32

    /// The kernel refused a descriptor; `errno` says why.
    struct Failure: Error {
        let errno: Int32
    }

    /// The set with the wake-up in it, its events carrying `wakeUpToken`.
    static func make(wakeUpToken: UInt64) throws(Failure) -> WakeableEpoll {
        let descriptor = epoll_create1(Int32(EPOLL_CLOEXEC))
        let wakeUp = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        let made = WakeableEpoll(descriptor: descriptor, wakeUp: wakeUp)
        guard descriptor >= 0, wakeUp >= 0, made.watch(wakeUp, token: wakeUpToken, events: EPOLLIN.rawValue) else {
            let code = errno
            if descriptor >= 0 { Glibc.close(descriptor) }
            if wakeUp >= 0 { Glibc.close(wakeUp) }
            throw Failure(errno: code)
        }
        return made
    }

    /// Adds `watched` to the set (or changes what it is watched for); false when the kernel refused.
    func watch(_ watched: Int32, token: UInt64, events: UInt32, modify: Bool = false) -> Bool {
        var event = epoll_event(events: events, data: epoll_data_t(u64: token))
        return epoll_ctl(descriptor, modify ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, watched, &event) == 0
    }

    func forget(_ watched: Int32) {
        _ = epoll_ctl(descriptor, EPOLL_CTL_DEL, watched, nil)
    }

    /// Wakes the loop (from any thread).
    func signal() {
        var one: UInt64 = 1
        _ = Glibc.write(wakeUp, &one, MemoryLayout<UInt64>.size)
    }

    /// Takes the wake-ups signalled so far (the loop's thread).
    func drain() {
        var count: UInt64 = 0
        _ = Glibc.read(wakeUp, &count, MemoryLayout<UInt64>.size)
    }

    func close() {
        Glibc.close(descriptor)
        Glibc.close(wakeUp)
    }
}
