import Glibc
import Platform
import Testing

@Suite("System calls")
struct SystemCallTests {
    /// A call a signal interrupts is made again; any other failure is the typed errno.
    @Test func anInterruptedCallIsMadeAgainAndAFailureSaysWhy() {
        var calls = 0
        let answer = systemCall { () -> Int in
            calls += 1
            guard calls > 2 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(answer == .success(7))
        #expect(calls == 3)

        let failed = systemCall { close(-1) }
        #expect(failed == .failure(Errno(EBADF)))
        #expect(Errno(EBADF).description == "Bad file descriptor")
        #expect(Errno(EAGAIN).wouldBlock && Errno(EWOULDBLOCK).wouldBlock && !Errno(EPIPE).wouldBlock)
    }
}
