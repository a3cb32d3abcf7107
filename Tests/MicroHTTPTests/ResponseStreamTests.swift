import Foundation
import TestSupport
import Testing
import Threading

@testable import MicroHTTP

/// Where a stream is held: inside libmicrohttpd (a handler that never says `mayStream`, or a
/// request that is not its connection's first), or on the acceptor's socket.
enum StreamHolder: String, CaseIterable, Sendable {
    case libmicrohttpd, acceptor
}

/// Answers every request with a new stream and hands the streams to the test.
final class StreamingHandler: HTTPHandler {
    let streams = Lock<[ResponseStream]>([])
    let closed = Counter()
    let maxQueuedBytes: Int
    let holder: StreamHolder

    init(maxQueuedBytes: Int = 256 * 1024, holder: StreamHolder = .libmicrohttpd) {
        self.maxQueuedBytes = maxQueuedBytes
        self.holder = holder
    }

    func mayStream(_ path: Substring) -> Bool { holder == .acceptor }

    func respond(to request: borrowing Request) -> Reply {
        let stream = ResponseStream(
            headers: [HTTPHeader("Content-Type", "text/plain")], maxQueuedBytes: maxQueuedBytes)
        stream.onClose { [closed] in closed.increment() }
        streams.withLock { $0.append(stream) }
        return .stream(stream)
    }

    var latest: ResponseStream? { streams.withLock { $0.last } }
    var count: Int { streams.withLock { $0.count } }
}

@Suite("MicroHTTP streams")
struct ResponseStreamTests {
    @Test(arguments: StreamHolder.allCases) func sendsEachChunkAsItIsSentAndEndsOnFinish(_ holder: StreamHolder)
        async throws
    {
        let handler = StreamingHandler(holder: holder)
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let head = try await connection.openStream("/stream")
        #expect(head.status == 200)
        #expect(head.header("Transfer-Encoding") == "chunked")
        let stream = try #require(handler.latest)
        #expect(stream.send(Array("first".utf8)))
        #expect(try await connection.readChunk() == Array("first".utf8))
        #expect(stream.send(Array("second".utf8)))
        #expect(try await connection.readChunk() == Array("second".utf8))
        stream.finish()
        #expect(try await connection.readChunk() == nil)
        #expect(!stream.send(Array("late".utf8)), "nothing is queued after finish")
        #expect(await eventually { handler.closed.count == 1 })
    }

    /// An idle stream's connection is suspended (the reader's only way to return 0, see
    /// `StreamQueueTests`), yet other clients are served meanwhile and a send wakes it.
    @Test(arguments: StreamHolder.allCases) func anIdleStreamWakesWhenSentToWhileOthersAreServed(_ holder: StreamHolder)
        async throws
    {
        let handler = StreamingHandler(holder: holder)
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.openStream("/stream")
        let stream = try #require(handler.latest)
        let busy = try HTTPConnection(port: server.port)
        _ = try await busy.openStream("/busy")
        let busyStream = try #require(handler.latest)
        for round in 0..<100 {
            #expect(busyStream.send(Array("tick \(round)".utf8)))
            #expect(try await busy.readChunk() == Array("tick \(round)".utf8))
        }
        #expect(stream.send(Array("wake".utf8)))
        #expect(try await connection.readChunk() == Array("wake".utf8))
    }

    @Test(arguments: StreamHolder.allCases) func aClientThatHangsUpIsReleasedAtTheNextSend(_ holder: StreamHolder)
        async throws
    {
        let handler = StreamingHandler(holder: holder)
        let server = try startServer(handler)
        defer { stopLater(server) }
        var connection: HTTPConnection? = try HTTPConnection(port: server.port)
        _ = try await connection?.openStream("/stream")
        let stream = try #require(handler.latest)
        connection = nil  // closes the socket
        #expect(
            await eventually {
                stream.send(Array("anyone there?\n".utf8))
                return handler.closed.count == 1
            })
        #expect(!stream.isOpen)
        #expect(!stream.send(Array("still?".utf8)))
        #expect(server.activeRequests == 0)
    }

    @Test(arguments: StreamHolder.allCases) func aClientTooSlowToReadIsCutOff(_ holder: StreamHolder) async throws {
        let handler = StreamingHandler(maxQueuedBytes: 512 * 1024, holder: holder)
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.openStream("/stream")  // and never reads the body
        let stream = try #require(handler.latest)
        // Sent back to back, with no pause to wait on: loopback socket buffers take megabytes
        // (Linux allows 4 MiB to send and 32 MiB to receive at most) before the backlog starts to
        // build up here. A bound on the bytes, not on time: a loaded machine gives a loop with
        // pauses only a few turns in 10 s.
        let chunk = [UInt8](repeating: 65, count: 128 * 1024)
        var sent = 0
        while stream.send(chunk) && sent < 256 * 1024 * 1024 { sent += chunk.count }
        #expect(sent >= 512 * 1024, "the backlog took maxQueuedBytes first")
        #expect(sent < 256 * 1024 * 1024, "the backlog stops growing at maxQueuedBytes")
        #expect(!stream.isOpen)
    }

    /// Chunks written to the socket directly while the client keeps up, and queued for
    /// libmicrohttpd while it is behind, reach it whole and in order.
    @Test(arguments: StreamHolder.allCases) func chunksKeepTheirOrderAcrossDirectAndQueuedWrites(_ holder: StreamHolder)
        async throws
    {
        let handler = StreamingHandler(maxQueuedBytes: 8 * 1024 * 1024, holder: holder)
        let server = try startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        _ = try await connection.openStream("/stream")
        let stream = try #require(handler.latest)
        func chunk(_ number: Int) -> [UInt8] {
            Array("chunk \(number) ".utf8) + [UInt8](repeating: UInt8(65 + number % 26), count: 3000)
        }
        #expect(stream.send(chunk(0)))
        #expect(try await connection.readChunk() == chunk(0))
        // Not read while sent: the socket buffers fill, later chunks wait in the queue (where
        // libmicrohttpd may send several as one HTTP chunk: the bytes are what counts).
        for number in 1..<1500 { #expect(stream.send(chunk(number))) }
        let expected = (1..<1500).flatMap(chunk)
        var received: [UInt8] = []
        while received.count < expected.count, let next = try await connection.readChunk() { received += next }
        #expect(received.count == expected.count)
        #expect(received == expected, "every byte, in order")
        #expect(stream.send(chunk(1500)), "caught up: written directly again")
        #expect(try await connection.readChunk() == chunk(1500))
    }

    @Test(arguments: StreamHolder.allCases) func stopEndsEveryStreamAndReturns(_ holder: StreamHolder) async throws {
        let handler = StreamingHandler(holder: holder)
        let server = try startServer(handler)
        var readers: [HTTPConnection] = []
        for _ in 0..<5 {  // each asks at once: an idle connection would meet the server's timeout
            let reader = try HTTPConnection(port: server.port)
            _ = try await reader.openStream("/stream")
            readers.append(reader)
        }
        #expect(await eventually { handler.count == 5 })
        server.stop()
        for reader in readers {
            let ended = try? await reader.readChunk()
            #expect(ended == nil, "the stream ended (last chunk or closed connection)")
        }
        #expect(handler.closed.count == 5)
    }
}

@Suite("Stream registry")
struct StreamRegistryTests {
    /// Past 1,024 streams a broadcast is written by several threads at once: every stream still
    /// gets the chunk once, after what it had.
    @Test(arguments: [3, 5000])
    func aBroadcastReachesEveryStreamOnce(_ count: Int) {
        let registry = StreamRegistry()
        let streams = (0..<count).map { _ in ResponseStream(headers: []) }
        for stream in streams { registry.add(stream, to: "carousel", first: Array("first;".utf8)) }
        registry.add(ResponseStream(headers: []), to: "another", first: [])
        registry.broadcast(Array("change;".utf8), to: "carousel")
        var buffer = [UInt8](repeating: 0, count: 64)
        for stream in streams {
            let count = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            #expect(Array(buffer[..<max(0, count)]) == Array("first;change;".utf8))
        }
        #expect(registry.count(in: "carousel") == count)
    }

    /// Streams leave from anywhere in their group (the last one takes the place of one that left):
    /// a broadcast then reaches each stream left once, and none that left.
    @Test func aBroadcastSkipsStreamsThatLeft() {
        let registry = StreamRegistry()
        let streams = (0..<10).map { _ in ResponseStream(headers: []) }
        for stream in streams { registry.add(stream, to: "carousel", first: []) }
        // The first, the last (by then moved to the first place), and two from the middle.
        let leaving = [0, 9, 4, 5]
        for index in leaving { registry.closed(streams[index]) }
        registry.broadcast(Array("change;".utf8), to: "carousel")
        for (index, stream) in streams.enumerated() {
            var buffer = [UInt8](repeating: 0, count: 64)
            let count = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
            if leaving.contains(index) {
                #expect(count < 0, "stream \(index) left: nothing to read")
            } else {
                #expect(Array(buffer[..<max(0, count)]) == Array("change;".utf8), "stream \(index)")
            }
        }
        #expect(registry.count(in: "carousel") == 6)
        #expect(registry.count == 6)
    }
}

@Suite("Stream queue: what the content reader does")
struct StreamQueueTests {
    private func take(_ queue: inout StreamQueue, capacity: Int) -> (StreamQueue.Take, [UInt8]) {
        var buffer = [UInt8](repeating: 0, count: capacity)
        let take = buffer.withUnsafeMutableBytes { queue.take(into: $0) }
        if case .bytes(let count) = take { return (take, Array(buffer[..<count])) }
        return (take, [])
    }

    @Test func withNothingQueuedTheReaderWaitsAndNeverEndsTheBody() {
        var queue = StreamQueue()
        #expect(take(&queue, capacity: 16).0 == .waitForMore)
        #expect(take(&queue, capacity: 16).0 == .waitForMore)
    }

    @Test func chunksGoOutInOrderAcrossBufferBoundaries() {
        var queue = StreamQueue()
        let accepted1 = queue.enqueue(Array("hello ".utf8), limit: 100)
        #expect(accepted1)
        let accepted2 = queue.enqueue(Array("world".utf8), limit: 100)
        #expect(accepted2)
        #expect(queue.queuedBytes == 11)
        #expect(take(&queue, capacity: 4) == (.bytes(4), Array("hell".utf8)))
        #expect(take(&queue, capacity: 4) == (.bytes(4), Array("o wo".utf8)))
        #expect(take(&queue, capacity: 16) == (.bytes(3), Array("rld".utf8)))
        #expect(queue.queuedBytes == 0)
        #expect(take(&queue, capacity: 16).0 == .waitForMore)
    }

    @Test func afterFinishWhatIsQueuedStillGoesOutThenTheBodyEnds() {
        var queue = StreamQueue()
        let accepted3 = queue.enqueue(Array("last".utf8), limit: 100)
        #expect(accepted3)
        queue.finish()
        let accepted4 = queue.enqueue(Array("late".utf8), limit: 100)
        #expect(!accepted4)
        #expect(take(&queue, capacity: 16) == (.bytes(4), Array("last".utf8)))
        #expect(take(&queue, capacity: 16).0 == .endOfStream)
    }

    @Test func anAbortedQueueTellsTheReaderToCloseTheConnection() {
        var queue = StreamQueue()
        _ = queue.enqueue(Array("queued".utf8), limit: 1024)
        queue.abort()
        #expect(take(&queue, capacity: 16).0 == .abort, "what was queued cannot follow a chunk cut short")
        let accepted = queue.enqueue(Array("more".utf8), limit: 1024)
        #expect(!accepted)
    }

    @Test func aChunkPastTheBacklogLimitEndsTheStream() {
        var queue = StreamQueue()
        let accepted5 = queue.enqueue([1, 2, 3], limit: 4)
        #expect(accepted5)
        let accepted6 = queue.enqueue([4, 5], limit: 4)
        #expect(!accepted6)
        #expect(queue.isFinished)
        #expect(take(&queue, capacity: 16) == (.bytes(3), [1, 2, 3]))
        #expect(take(&queue, capacity: 16).0 == .endOfStream)
    }
}
