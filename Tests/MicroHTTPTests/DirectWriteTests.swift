import Glibc
import Testing

@testable import MicroHTTP

/// A connected pair of TCP sockets on loopback, as a stream's connection and its client.
private struct SocketPair: ~Copyable {
    let server: Int32
    private(set) var client: Int32

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        try withUnsafeMutablePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                guard bind(listener, generic, length) == 0, listen(listener, 1) == 0,
                    getsockname(listener, generic, &length) == 0
                else { throw Errno(errno) }
            }
        }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) }
        }
        guard connected == 0 else {
            close(client)
            throw Errno(errno)
        }
        let server = accept(listener, nil, nil)
        guard server >= 0 else {
            close(client)
            throw Errno(errno)
        }
        _ = fcntl(server, F_SETFL, fcntl(server, F_GETFL) | O_NONBLOCK)  // as libmicrohttpd's are
        self.client = client
        self.server = server
    }

    /// Reads exactly `count` bytes on the client side.
    func read(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = bytes.withUnsafeMutableBytes { Glibc.read(client, $0.baseAddress! + got, count - got) }
            if n <= 0 { break }
            got += n
        }
        return Array(bytes[..<got])
    }

    /// Closes the client with a reset, as a client that vanished does.
    mutating func resetClient() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(client, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(client)
        client = -1
    }

    deinit {
        close(server)
        if client >= 0 { close(client) }
    }
}

private struct Errno: Error {
    let code: Int32
    init(_ code: Int32) { self.code = code }
}

@Suite("Direct writes to an idle stream's socket")
struct DirectWriteTests {
    @Test func aChunkIsFramedAsLibmicrohttpdFramesIt() throws {
        let pair = try SocketPair()
        #expect(DirectWrite.chunk(FramedChunk(Array("hello, screens".utf8)), to: pair.server) == .written)
        #expect(pair.read(19) == Array("e\r\nhello, screens\r\n".utf8))
    }

    @Test func aChunkTooLargeToSurelyFitIsLeftToLibmicrohttpd() throws {
        let pair = try SocketPair()
        let large = [UInt8](repeating: 65, count: DirectWrite.maxBytes + 1)
        #expect(DirectWrite.chunk(FramedChunk(large), to: pair.server) == .notNow)
        #expect(
            DirectWrite.chunk(FramedChunk(Array("next".utf8)), to: pair.server) == .written, "nothing of it was sent")
        #expect(pair.read(9) == Array("4\r\nnext\r\n".utf8))
    }

    @Test func aClientBehindGetsNothingDirectly() throws {
        let pair = try SocketPair()
        // Fill the client's receive buffer and the server's send buffer: the client reads nothing.
        let filler = [UInt8](repeating: 66, count: 65536)
        while filler.withUnsafeBytes({ send(pair.server, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
        #expect(DirectWrite.chunk(FramedChunk(Array("late".utf8)), to: pair.server) == .notNow)
    }

    @Test func aClientThatLeftCutsTheStreamShort() throws {
        var pair = try SocketPair()
        pair.resetClient()
        var outcome = DirectWrite.Outcome.written
        // The reset may take a moment to arrive: a first write can still be taken.
        for _ in 0..<100 where outcome == .written {
            outcome = DirectWrite.chunk(FramedChunk(Array("anyone?".utf8)), to: pair.server)
        }
        #expect(outcome == .cutShort)
    }
}

@Suite("Direct writes: chunk lengths")
struct DirectWriteLengthTests {
    @Test(arguments: [1, 9, 10, 15, 16, 255, 256, 4000])
    func theLengthIsWrittenInHex(_ count: Int) throws {
        let pair = try SocketPair()
        let body = [UInt8](repeating: 120, count: count)
        #expect(DirectWrite.chunk(FramedChunk(body), to: pair.server) == .written)
        let header = Array(String(count, radix: 16).utf8) + Array("\r\n".utf8)
        #expect(pair.read(header.count + count + 2) == header + body + Array("\r\n".utf8))
    }

    /// What a stream on the acceptor's socket writes and queues is the same frame, whatever its size.
    @Test(arguments: [1, 15, 16, 4096, 70000])
    func aQueuedFrameIsTheFrameWritten(_ count: Int) {
        let body = [UInt8](repeating: 120, count: count)
        let frame = FramedChunk(body).frame
        #expect(frame == Array(String(count, radix: 16).utf8) + Array("\r\n".utf8) + body + Array("\r\n".utf8))
    }
}
