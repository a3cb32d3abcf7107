import Dispatch
import Testing
import Threading

@Suite("Per-thread counters")
struct PerThreadCountersTests {
    /// Eight threads add at once, each to its own slot: the sum misses nothing, and a thread's
    /// counts stay after it has gone.
    @Test func theSumOfEveryThreadsCountsMissesNothing() {
        let counters = PerThreadCounters(count: 3)
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for _ in 0..<10_000 {
                counters.withSlot { slot in
                    slot.add(1, at: 0)
                    slot.add(UInt64(thread), at: 2)
                }
            }
        }
        #expect(counters.sum() == [80_000, 0, 10_000 * (0..<8).reduce(0, +)])
    }

    /// A scrape may sum while requests count: it sees each counter at some moment, never more.
    @Test func summingWhileThreadsAddSeesNoMoreThanWasAdded() async {
        let counters = PerThreadCounters(count: 1)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<50_000 { counters.withSlot { $0.add(1, at: 0) } } }
            }
            group.addTask {
                var last: UInt64 = 0
                for _ in 0..<1_000 {
                    let now = counters.sum()[0]
                    #expect(now >= last && now <= 200_000)
                    last = now
                }
            }
        }
        #expect(counters.sum() == [200_000])
    }
}
