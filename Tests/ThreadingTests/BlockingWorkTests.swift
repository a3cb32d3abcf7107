import Dispatch
import Foundation
import Testing
import Threading

/// Code that blocks (a store write waiting for a lock) must not hold up other work: more blocked
/// jobs at once than there are cores, which the cooperative pool (one thread per core) could not
/// run together, all run together here (docs/ARCHITECTURE.md, who runs where).
@Suite("Blocking work")
struct BlockingWorkTests {
    static let count = 2 * ProcessInfo.processInfo.activeProcessorCount + 2

    /// Each caller arrives, then blocks until every caller has arrived: true for all of them only
    /// when all were blocked at the same time.
    final class Meeting: Sendable {
        private let arrivals = DispatchGroup()

        init(of count: Int) {
            for _ in 0..<count { arrivals.enter() }
        }

        func arriveAndWaitForEveryone() -> Bool {
            arrivals.leave()
            return arrivals.wait(timeout: .now() + 60) == .success
        }
    }

    actor BlockingActor {
        private let executor = BlockingSerialExecutor(label: "test.blocking-actor")
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func meet(_ meeting: Meeting) -> Bool { meeting.arriveAndWaitForEveryone() }
    }

    @Test func tasksPreferringTheBlockingExecutorBlockTogether() async {
        let meeting = Meeting(of: Self.count)
        let tasks = (0..<Self.count).map { _ in
            Task(executorPreference: BlockingTaskExecutor.shared) { meeting.arriveAndWaitForEveryone() }
        }
        for task in tasks { #expect(await task.value) }
    }

    @Test func actorsOnBlockingSerialExecutorsBlockTogether() async {
        let meeting = Meeting(of: Self.count)
        let actors = (0..<Self.count).map { _ in BlockingActor() }
        let tasks = actors.map { actor in Task { await actor.meet(meeting) } }
        for task in tasks { #expect(await task.value) }
    }
}
