import Testing
import Threading

@Suite("Lock")
struct LockTests {
    @Test func guardsItsValueAcrossTasks() async {
        let counter = Lock(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<1000 { counter.withLock { $0 += 1 } }
                }
            }
        }
        #expect(counter.withLock { $0 } == 8000)
    }

    #if DEBUG
        /// Taking the lock again on the thread that holds it would hang a release build forever;
        /// the debug build's error-checking mutex stops the process and says why.
        @Test func reentryStopsADebugBuildInsteadOfHanging() async {
            await #expect(processExitsWith: .failure) {
                let lock = Lock(0)
                lock.withLock { _ in lock.withLock { $0 += 1 } }
            }
        }
    #endif
}
