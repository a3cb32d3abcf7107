import Foundation
import MicroHTTP
import Testing

@testable import BannerAPI

/// The read path's per-thread copies (docs/ARCHITECTURE.md, "The read path"): a worker thread
/// that has read a carousel must still see every change made on other threads — a command, a
/// deletion, a carousel created again under the same name.
@Suite("Reads on one thread")
struct ReadCacheTests {
    @Test func aThreadThatReadACarouselSeesEveryLaterChangeMadeElsewhere() async throws {
        let harness = RouterHarness()
        let reads = try await onOneThread { reader in
            var seen: [(status: Int, banner: String?, version: Int?)] = []
            func read() throws {
                let response = reader.read(harness, "/carousels/lobby/banner")
                let json = response.status == 200 ? try response.json : [:]
                seen.append(
                    (response.status, (json["banner"] as? [String: Any])?["id"] as? String, json["version"] as? Int))
            }
            _ = reader.wait { await harness.sendJSON("POST", "/carousels", Self.lobby(banners: ["a", "b"])) }
            try read()
            try read()  // from this thread's copies
            _ = reader.wait { await harness.send("POST", "/carousels/lobby/banner/next") }
            try read()
            let tag = reader.wait { await harness.send("GET", "/carousels/lobby") }.header("ETag") ?? ""
            _ = reader.wait { await harness.send("DELETE", "/carousels/lobby", headers: [("If-Match", tag)]) }
            try read()
            _ = reader.wait { await harness.sendJSON("POST", "/carousels", Self.lobby(banners: ["c"])) }
            try read()
            return seen
        }
        #expect(reads.map(\.status) == [200, 200, 200, 404, 200])
        #expect(reads.map(\.banner) == ["a", "a", "b", nil, "c"])
        #expect(reads[2].version == reads[1].version.map { $0 + 1 })
    }

    static func lobby(banners: [String]) -> String {
        let list = banners.map { #"{"id": "\#($0)", "image": "https://cdn.example.com/\#($0).png"}"# }
        return #"{"name": "lobby", "interval": 3600, "banners": [\#(list.joined(separator: ", "))]}"#
    }
}

/// Runs `body` on a thread of its own, which it may block (unlike the concurrency pool's) while
/// work it waits for runs elsewhere.
private func onOneThread<Result: Sendable>(_ body: @escaping @Sendable (Reader) throws -> Result) async throws
    -> Result
{
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Swift.Result { try body(Reader()) })
        }.start()
    }
}

/// What the thread of `onOneThread` does.
private struct Reader {
    /// A read answered on this thread, as a worker thread of libmicrohttpd answers it.
    func read(_ harness: RouterHarness, _ path: String) -> Response {
        switch harness.api.respond(to: Request(method: "GET", path: path)) {
        case .prepared(let prepared): return prepared.response
        case .response(let response): return response
        case .deferred, .stream: return Response(status: 0)
        }
    }

    /// `work` run elsewhere, this thread blocked until it is done.
    func wait(_ work: @escaping @Sendable () async -> Response) -> Response {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        Task {
            result.response = await work()
            done.signal()
        }
        done.wait()
        return result.response!
    }
}

/// Handed from the task to the blocked thread; the semaphore orders the two accesses.
private final class ResultBox: @unchecked Sendable {
    var response: Response?
}
