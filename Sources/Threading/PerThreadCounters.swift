import Glibc
import Synchronization

/// Counters that many threads add to without writing a shared cache line: each thread adds to a
/// slot of its own (found through a pthread key), and a reader sums the slots. For counting on
/// the read path, where one shared atomic would bounce between the cores on every request.
///
/// A slot is made the first time a thread adds, and kept for the counters' life (a thread's
/// counts outlive it); so only threads of a bounded pool should add here.
public final class PerThreadCounters: @unchecked Sendable {
    public let count: Int
    private let key = ThreadKey()
    private let slots = Lock<[UnsafeMutablePointer<Atomic<UInt64>>]>([])

    public init(count: Int) {
        self.count = count
    }

    deinit {
        slots.withLock { slots in
            for slot in slots {
                slot.deinitialize(count: count)
                UnsafeMutableRawPointer(slot).deallocate()
            }
        }
    }

    /// `body` with this thread's slot, for several additions after one look-up of it.
    @inline(__always)
    public func withSlot<Result>(_ body: (Slot) -> Result) -> Result {
        body(Slot(counters: mySlot()))
    }

    /// One thread's counters; only that thread writes them.
    public struct Slot {
        fileprivate let counters: UnsafeMutablePointer<Atomic<UInt64>>

        /// A load and a store, no locked read-modify-write: no other thread writes this slot.
        @inline(__always)
        public func add(_ value: UInt64, at index: Int) {
            counters[index].store(counters[index].load(ordering: .relaxed) &+ value, ordering: .relaxed)
        }
    }

    /// Every counter, summed over the threads.
    public func sum() -> [UInt64] {
        var totals = [UInt64](repeating: 0, count: count)
        slots.withLock { slots in
            for slot in slots {
                for index in 0..<count { totals[index] &+= slot[index].load(ordering: .relaxed) }
            }
        }
        return totals
    }

    private func mySlot() -> UnsafeMutablePointer<Atomic<UInt64>> {
        if let slot = key.value { return slot.assumingMemoryBound(to: Atomic<UInt64>.self) }
        // Cache-line aligned, so that no two threads' slots share a line.
        let bytes = (count * MemoryLayout<UInt64>.stride + 63) / 64 * 64
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: 64)
        let slot = raw.bindMemory(to: Atomic<UInt64>.self, capacity: count)
        for index in 0..<count { (slot + index).initialize(to: Atomic(0)) }
        slots.withLock { $0.append(slot) }
        key.set(raw)
        return slot
    }
}
