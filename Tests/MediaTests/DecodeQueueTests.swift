import Dispatch
import Glibc
import Media
import TestSupport
import Testing

/// Where uploads are decoded (docs/MEDIA.md): off the request threads, bounded, and yielding.
@Suite("Decode queue")
struct DecodeQueueTests {
    /// A decode runs only where a core would otherwise idle: `SCHED_IDLE` (a request thread
    /// waking up takes the core at once), nice 19 besides.
    @Test func aDecodeRunsOnAThreadEveryOtherThreadGoesBefore() async {
        let queue = DecodeQueue(workers: 1, backlog: 0)
        defer { queue.stop() }
        let scheduling = await queue.run {
            (policy: sched_getscheduler(0), nice: getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0))
        }
        #expect(scheduling?.policy == 5)  // SCHED_IDLE
        #expect(scheduling?.nice == 19)
    }

    /// Past `workers` running and `backlog` waiting, a job is turned away at once (nil), not queued.
    @Test func pastItsWorkersAndBacklogAJobIsTurnedAway() async {
        let queue = DecodeQueue(workers: 1, backlog: 1)
        defer { queue.stop() }
        let release = DispatchSemaphore(value: 0)
        async let first = queue.run {
            release.wait()
            return 1
        }
        #expect(await eventually { queue.pending == 1 })
        async let second = queue.run { 2 }
        #expect(await eventually { queue.pending == 2 })
        #expect(await queue.run { 3 } == nil, "one running, one waiting: full")
        release.signal()
        #expect(await first == 1)
        #expect(await second == 2)
    }
}
