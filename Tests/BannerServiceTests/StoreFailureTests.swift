import BannerService
import Foundation
import TestSupport
import Testing

@testable import SQLiteStore

/// A store that refuses writes (docs/STORE.md): the write gets 503 with `Retry-After` and a
/// detail an operator can act on, nothing changes, reads go on.
@Suite("A failing store")
struct StoreFailureTests {
    @Test func aWriteWhileAnotherProgramHoldsTheStoreIs503AndChangesNothing() async throws {
        let path = try temporaryDirectory().appendingPathComponent("carousel.db").path
        let live = try await LiveService(store: .sqlite(path: path))
        let before = try await live.state()
        let intruder = try SQLiteConnection(path: path)
        // The intruder waits its turn: the service may be writing at that moment (play counts).
        intruder.waitWhileBusy(upTo: .seconds(60))
        try intruder.execute("BEGIN IMMEDIATE")
        let refused = try await live.request("POST", "/banner/next")
        #expect(refused.status == 503)
        #expect(refused.header("Retry-After") == "5")
        #expect(
            refused.problemDetail?.hasPrefix(
                "nothing was changed: the SQLite store \(path) stayed locked by another connection for 5.0 s") == true)
        let edit = try await live.request(
            "PATCH", "/carousels/default", headers: [("Content-Type", "application/json")], body: #"{"interval": 9}"#)
        #expect(edit.status == 503)
        let during = try await live.state()
        #expect(during["index"] as? Int == before["index"] as? Int)
        #expect(during["version"] as? Int == before["version"] as? Int)
        try intruder.execute("ROLLBACK")
        #expect(try await live.request("POST", "/banner/next").status == 200, "the store is back: writes go on")
    }

    static let isRoot = getuid() == 0

    /// A real full disk: a small tmpfs, filled up (mounting needs root, as CI runs).
    @Test(.enabled(if: isRoot, "mounting a tmpfs needs root"))
    func aFullDiskIs503UntilThereIsRoomAgain() async throws {
        let mountPoint = try temporaryDirectory()
        let mount = try ServerProcess(
            executable: URL(fileURLWithPath: "/bin/mount"),
            arguments: ["-t", "tmpfs", "-o", "size=2m", "tmpfs", mountPoint.path])
        #expect(await mount.waitForExit(seconds: 10) == 0, "\(mount.standardError)")
        let path = mountPoint.appendingPathComponent("carousel.db").path
        do {
            let live = try await LiveService(store: .sqlite(path: path))
            // Plain write(2) until ENOSPC, and one close: a descriptor closed twice could be a
            // number another test's server has reused for its listening socket.
            let filler = mountPoint.appendingPathComponent("filler")
            let descriptor = open(filler.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            try #require(descriptor >= 0)
            let block = [UInt8](repeating: 0, count: 64 * 1024)
            while write(descriptor, block, block.count) > 0 {}
            close(descriptor)
            let refused = try await live.request("POST", "/banner/next")
            #expect(refused.status == 503)
            #expect(refused.problemDetail?.contains("is full") == true, "\(refused.text)")
            #expect(try await live.request("GET", "/banner").status == 200, "reads go on")
            try FileManager.default.removeItem(at: filler)
            #expect(try await live.request("POST", "/banner/next").status == 200)
        }
        let unmount = try ServerProcess(
            executable: URL(fileURLWithPath: "/bin/umount"), arguments: ["-l", mountPoint.path])
        #expect(await unmount.waitForExit(seconds: 10) == 0)
    }
}
