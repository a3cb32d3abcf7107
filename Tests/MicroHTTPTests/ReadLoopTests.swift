import Foundation
import TestSupport
import Testing

@testable import MicroHTTP

/// Reads answered at once: pre-built responses, a large one, an echo of what the request said;
/// `/later`, answered by deferred work, and `/gated/N`, whose work waits until the test opens
/// gate N; `POST /report` is answered at once too (its body echoed, 202), `POST /echo-body` is not
/// answered in the loops.
final class ReadingHandler: HTTPHandler {
    let small = PreparedResponse(
        Response(
            status: 200, headers: [HTTPHeader("Content-Type", "text/plain"), HTTPHeader("ETag", "\"s1\"")],
            body: Array("small".utf8)))
    /// Far more than a socket's send buffer: written over several calls. Built once for every test.
    static let bigBody = [UInt8](unsafeUninitializedCapacity: 4 << 20) { buffer, count in
        for index in buffer.indices { buffer[index] = UInt8(truncatingIfNeeded: index % 251) }
        count = buffer.count
    }
    let big = PreparedResponse(Response(status: 200, body: ReadingHandler.bigBody))
    /// The same bytes from a memory file (`sendfile`), and a 304 that says their length alone.
    let bigFile = PreparedResponse(
        Response(status: 200, headers: [HTTPHeader("ETag", "\"f1\"")], body: ReadingHandler.bigBody), body: .file)
    let bigNotModified = PreparedResponse(
        notModified: [HTTPHeader("ETag", "\"f1\"")], bodyLength: ReadingHandler.bigBody.count)
    /// Headers libmicrohttpd refuses (a CR or LF) and takes (any other line separator).
    let odd = PreparedResponse(
        Response(
            status: 200,
            headers: [
                HTTPHeader("X-Split", "a\r\nInjected: yes"), HTTPHeader("X-Separator", "a\u{2028}b\u{85}c"),
                HTTPHeader("X-Bare\n", "b"), HTTPHeader("X-Fine", "ok"),
            ], body: Array("odd".utf8)))
    let laterCalls = Counter()
    let gates = [AsyncGate(), AsyncGate()]
    /// Gated work started, and finished (its answer handed to the server).
    let gatedCalls = Counter()
    let gatedAnswers = Counter()

    let reports = Counter()

    func answersWithoutStream(method: String, path: String) -> Bool {
        method == "POST" ? path == "/report" : path != "/echo-body"
    }

    func respond(to request: borrowing Request) -> Reply {
        switch request.path {
        case "/small": return .prepared(small)
        case "/big": return .prepared(big)
        case "/big-file": return .prepared(bigFile)
        case "/big-file-304": return .prepared(bigNotModified)
        case "/odd": return .prepared(odd)
        case "/echo":
            let text =
                "\(request.method) \(request.path) q=\(request.queryParameter("q") ?? "-") "
                + "probe=\(request.header("x-probe") ?? "-") loopback=\(request.isFromLoopback)"
            return .response(Response(status: 200, body: Array(text.utf8)))
        case "/echo-body": return .response(Response(status: 201, body: request.body))
        case "/report":
            reports.increment()
            return .response(Response(status: 202, body: request.body))
        case "/later":
            laterCalls.increment()
            return .deferred { PreparedResponse(Response(status: 202, body: Array("later".utf8))) }
        case "/gated/0", "/gated/1":
            gatedCalls.increment()
            let number = request.path.last == "0" ? 0 : 1
            return .deferred { [gates, gatedAnswers] in
                await gates[number].wait()
                defer { gatedAnswers.increment() }
                return PreparedResponse(Response(status: 200, body: Array("gated \(number)".utf8)))
            }
        default: return .response(Response(status: 404))
        }
    }
}

@Suite("Read loops: keep-alive reads outside libmicrohttpd")
struct ReadLoopTests {
    static func startServer(
        // A loaded run (every test at once on two cores, sanitizers) can leave a test's connection
        // idle for longer than the usual 15 s while its task waits to run again.
        _ handler: ReadingHandler, timeout: Int = Int(60 * sanitizerAllowance), perAddressLimit: Int = 0,
        clock: ServerClock = .system, threads: Int = 2
    ) throws -> HTTPServer {
        try HTTPServer(
            configuration: ServerConfiguration(
                host: "127.0.0.1", port: 0, threads: threads, connectionTimeoutSeconds: timeout,
                perAddressConnectionLimit: perAddressLimit, clock: clock),
            handler: handler)
    }

    /// The same response as libmicrohttpd writes it (the connection moved there after a POST):
    /// status, headers in order but `Date`, body.
    @Test func aReadIsAnsweredAsLibmicrohttpdAnswersItUntilAnotherRequestComes() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let first = try await connection.send("GET", "/small")
        #expect(server.connectionsInReadLoops == 1)
        let head = try await connection.send("HEAD", "/small")
        #expect(head.status == 200 && head.header("Content-Length") == "5")
        let echo = try await connection.send("GET", "/echo?q=7", headers: [("X-Probe", "  here ")])
        #expect(echo.text == "GET /echo q=7 probe=here loopback=true")

        let posted = try await connection.send("POST", "/echo-body", body: Array("hello".utf8))
        #expect(posted.status == 201 && posted.text == "hello")
        #expect(server.connectionsInReadLoops == 0, "the POST took the connection to libmicrohttpd")
        let second = try await connection.send("GET", "/small")
        let echoed = try await connection.send("GET", "/echo")
        #expect(echoed.text == "GET /echo q=- probe=- loopback=true", "libmicrohttpd was handed the client's address")

        func withoutDate(_ response: HTTPResponse) -> [String] {
            response.headers.filter { $0.name != "Date" }.map { "\($0.name): \($0.value)" }
        }
        #expect(first.status == second.status)
        #expect(withoutDate(first) == withoutDate(second))
        #expect(first.body == second.body && first.text == "small")
        #expect(first.header("Date") != nil)
        #expect(head.headers.map(\.name) == first.headers.map(\.name))
    }

    /// A header libmicrohttpd would refuse is left out here too, and one it takes is kept.
    @Test func headersAreWrittenAsLibmicrohttpdWritesThem() async throws {
        let server = try Self.startServer(ReadingHandler())
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let here = try await connection.send("GET", "/odd")
        #expect(server.connectionsInReadLoops == 1)
        _ = try await connection.send("POST", "/echo-body", body: Array("x".utf8))
        let there = try await connection.send("GET", "/odd")
        #expect(server.connectionsInReadLoops == 0)
        let names = { (response: HTTPResponse) in response.headers.map(\.name).filter { $0 != "Date" } }
        #expect(names(here) == ["X-Separator", "X-Fine", "Content-Length"])
        #expect(names(here) == names(there))
        #expect(here.header("X-Separator") == "a\u{2028}b\u{85}c")
        #expect(here.header("X-Separator") == there.header("X-Separator"))
    }

    @Test func pipelinedRequestsAreAnsweredInOrderAcrossTheHandOver() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let requests =
            "GET /small HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /echo?q=2 HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /echo-body HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
            + "GET /small HTTP/1.1\r\nHost: a\r\n\r\n"
        try await connection.write(Array(requests.utf8))
        #expect(try await connection.readResponse().text == "small")
        #expect(try await connection.readResponse().text == "GET /echo q=2 probe=- loopback=true")
        #expect(try await connection.readResponse().text == "abc")
        #expect(try await connection.readResponse().text == "small")
    }

    /// A report (a POST answered at once) stays in the loop, its body read whole however it
    /// arrives; one the loop cannot read plainly (chunks, a body over the limit) goes to
    /// libmicrohttpd, which answers it as always.
    @Test func aPostAnsweredAtOnceIsReadHereWithItsBody() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let posted = try await connection.send("POST", "/report", body: Array("{\"a\":1}".utf8))
        #expect(posted.status == 202 && posted.text == "{\"a\":1}")
        #expect(server.connectionsInReadLoops == 1)
        let empty = try await connection.send("POST", "/report", body: [])
        #expect(empty.status == 202 && empty.body.isEmpty)
        for piece in ["POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", "hello", " world"] {
            try await connection.write(Array(piece.utf8))
        }
        #expect(try await connection.readResponse().text == "hello world")
        let pipelined =
            "POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none"
            + "GET /small HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\ntwo"
        try await connection.write(Array(pipelined.utf8))
        #expect(try await connection.readResponse().text == "one")
        #expect(try await connection.readResponse().text == "small")
        #expect(try await connection.readResponse().text == "two")
        #expect(server.connectionsInReadLoops == 1)
        #expect(handler.reports.count == 5, "each report taken once")

        let chunked = "POST /report HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        try await connection.write(Array(chunked.utf8))
        #expect(try await connection.readResponse().text == "abc")
        #expect(server.connectionsInReadLoops == 0, "a chunked body took the connection to libmicrohttpd")
        #expect(handler.reports.count == 6)
    }

    @Test func aPostOverTheBodyLimitIsLeftToLibmicrohttpd() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        let tooLarge = try await connection.send(
            "POST", "/report", body: [UInt8](repeating: 0x61, count: 16 * 1024 + 1))
        #expect(tooLarge.status == 413)
        #expect(handler.reports.count == 0)
    }

    @Test func aHeadArrivingInPiecesIsAnswered() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        for piece in ["G", "ET /echo?q=sl", "ow HTTP/1.1\r", "\nHost: a\r\nX-Pro", "be: b\r\n", "\r\n"] {
            try await connection.write(Array(piece.utf8))
        }
        #expect(try await connection.readResponse().text == "GET /echo q=slow probe=b loopback=true")
        #expect(server.connectionsInReadLoops == 1)
    }

    /// 4 MiB do not fit in the socket: the loop keeps the rest until the client reads, and reads
    /// the next request only after.
    @Test func aLargeAnswerReachesAClientThatReadsItLate() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        try await connection.write(
            Array("GET /big HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        let big = try await connection.readResponse()
        #expect(big.body == ReadingHandler.bigBody)
        #expect(try await connection.readResponse().text == "small")
    }

    /// A `.file` body is an unnamed file in the directory, opened read-only (no descriptor that
    /// could write it is left); where the directory cannot have one, a sealed memory file.
    @Test func aFileBodyIsAReadOnlyUnnamedFileElseASealedMemoryFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bodies-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = Array("an image".utf8)
        let inDirectory = PreparedResponse(
            Response(status: 200, body: body), body: .file, fileDirectory: directory.path)
        let unnamed = try #require(inDirectory.bodyFile, "no file was made in \(directory.path)")
        let target = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(unnamed)")
        #expect(target.hasPrefix(directory.path + "/#") && target.hasSuffix(" (deleted)"), "\(target)")
        #expect(fcntl(unnamed, F_GETFL) & O_ACCMODE == O_RDONLY)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        #expect(inDirectory.body == body)

        let nowhere = PreparedResponse(
            Response(status: 200, body: body), body: .file, fileDirectory: directory.path + "/missing")
        let memory = try #require(nowhere.bodyFile, "no memory file was made")
        let memoryTarget = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(memory)")
        #expect(memoryTarget.hasPrefix("/memfd:response-body"), "\(memoryTarget)")
        let sealed: Int32 = 0x1 | 0x2 | 0x4 | 0x8  // F_SEAL_SEAL, SHRINK, GROW, WRITE
        #expect(fcntl(memory, 1024 + 10) == sealed)  // F_GET_SEALS
        #expect(nowhere.body == body)
    }

    /// Clients that leave in the middle of a file (their sockets closed with the rest unread: a
    /// reset, arriving while the server is sending) end their connections, not the process:
    /// `sendfile` has no `MSG_NOSIGNAL`, and a write to a reset connection raises SIGPIPE.
    @Test func clientsLeavingInTheMiddleOfAFileDoNotEndTheProcess() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<25 {
                        let connection = try HTTPConnection(port: server.port)
                        try await connection.write(Array("GET /big-file HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
                        // Read while the server sends, then leave with most of the 4 MiB to come.
                        let read = try await connection.readRaw { $0.count >= 256 << 10 }
                        #expect(read.starts(with: Array("HTTP/1.1 200".utf8)))
                    }
                }
            }
            try await group.waitForAll()
        }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").text == "small")
    }

    /// A body kept in a file goes whole, however slowly the client reads, from a read loop
    /// (`sendfile` after the head) and from libmicrohttpd (its own `sendfile`); HEAD and a 304
    /// say its length and send none of it.
    @Test func aBodyInAFileIsSentWholeByEitherPath() async throws {
        let handler = ReadingHandler()
        _ = try #require(handler.bigFile.bodyFile, "the body was not put in a file")
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port, receiveBuffer: 4096)
        for handedOver in [false, true] {
            if handedOver { _ = try await connection.send("POST", "/echo-body", body: Array("x".utf8)) }
            // Asked with the next request behind it, read late and in small pieces.
            try await connection.write(
                Array("GET /big-file HTTP/1.1\r\nHost: a\r\n\r\nGET /small HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
            let whole = try await connection.readResponse()
            #expect(whole.status == 200 && whole.body == ReadingHandler.bigBody, "handed over: \(handedOver)")
            #expect(whole.header("Content-Length") == "\(ReadingHandler.bigBody.count)")
            #expect(try await connection.readResponse().text == "small")
            #expect(server.connectionsInReadLoops == (handedOver ? 0 : 1))
            let head = try await connection.send("HEAD", "/big-file")
            #expect(head.status == 200 && head.header("Content-Length") == "\(ReadingHandler.bigBody.count)")
            let notModified = try await connection.send("GET", "/big-file-304")
            #expect(notModified.status == 304 && notModified.body.isEmpty)
            #expect(notModified.header("Content-Length") == "\(ReadingHandler.bigBody.count)")
            #expect(notModified.header("ETag") == "\"f1\"")
            #expect(try await connection.send("GET", "/small").text == "small", "the 304 sent no body bytes")
        }
    }

    @Test func anIdleConnectionIsClosedAfterTheTimeout() async throws {
        let handler = ReadingHandler()
        let clock = ServerClock.manual()
        let server = try Self.startServer(handler, timeout: 1, clock: clock)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        #expect(server.connectionsInReadLoops == 1)
        #expect(await clock.advance(by: .milliseconds(1100), until: connection))
        #expect(await eventually { server.connectionsInReadLoops == 0 })
    }

    /// An answer made by deferred work (a command's) is waited for in the loop: the handler is
    /// asked once, and the connection stays.
    @Test func aDeferredAnswerIsWaitedForInTheLoop() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        let later = try await connection.send("GET", "/later")
        #expect(later.status == 202 && later.text == "later")
        #expect(handler.laterCalls.count == 1)
        #expect(server.connectionsInReadLoops == 1)
        let head = try await connection.send("HEAD", "/later")
        #expect(head.status == 202 && head.body.isEmpty && head.header("Content-Length") == "5")
        #expect(try await connection.send("GET", "/small").text == "small")
        #expect(server.connectionsInReadLoops == 1)
    }

    /// What arrives behind a request whose answer is being made waits for it, and is answered
    /// after it, in order: no new edge announces bytes that came while the connection waited.
    @Test func requestsBehindADeferredAnswerAreAnsweredAfterIt() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        let requests =
            "GET /gated/0 HTTP/1.1\r\nHost: a\r\n\r\n" + "GET /small HTTP/1.1\r\nHost: a\r\n\r\n"
            + "POST /report HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\none"
        try await connection.write(Array(requests.utf8))
        #expect(await eventually { handler.gatedCalls.count == 1 })
        #expect(handler.reports.count == 0, "nothing behind it is answered before it")
        await handler.gates[0].open()
        #expect(try await connection.readResponse().text == "gated 0")
        #expect(try await connection.readResponse().text == "small")
        #expect(try await connection.readResponse().text == "one")
        #expect(server.connectionsInReadLoops == 1)
    }

    /// A client that resets its connection while its answer is made: the answer goes to no one —
    /// not to a later connection given the same descriptor number, waiting for its own.
    @Test func anAnswerWhoseClientLeftGoesToNoOne() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler, threads: 1)  // one loop: both connections in it
        defer { stopLater(server) }
        do {
            let leaving = try HTTPConnection(port: server.port)
            try await leaving.write(Array("GET /gated/0 HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
            #expect(await eventually { handler.gatedCalls.count == 1 })
            leaving.resetOnClose()
        }
        #expect(await eventually { server.connectionsInReadLoops == 0 })
        let staying = try HTTPConnection(port: server.port)
        try await staying.write(Array("GET /gated/1 HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(await eventually { handler.gatedCalls.count == 2 })
        await handler.gates[0].open()
        #expect(await eventually { handler.gatedAnswers.count == 1 })
        await handler.gates[1].open()
        #expect(try await staying.readResponse().text == "gated 1")
        #expect(try await staying.send("GET", "/small").text == "small")
    }

    /// Stopping answers a request whose work still runs as libmicrohttpd answers the ones it
    /// suspended: 503, and the connection closed.
    @Test func stoppingAnswersTheRequestsWaitingThere() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        let connection = try HTTPConnection(port: server.port)
        try await connection.write(Array("GET /gated/0 HTTP/1.1\r\nHost: a\r\n\r\n".utf8))
        #expect(await eventually { handler.gatedCalls.count == 1 })
        try await offThePool { server.stop() }
        let answer = try await connection.readResponse()
        #expect(answer.status == 503 && answer.text == "server is shutting down\n")
        #expect(await connection.waitForClose())
        await handler.gates[0].open()  // the work ends; its answer finds no loop
        #expect(await eventually { handler.gatedAnswers.count == 1 })
    }

    @Test func stoppingClosesTheConnectionsHeldThere() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler)
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").status == 200)
        server.stop()
        #expect(await connection.waitForClose())
    }

    /// libmicrohttpd alone counts connections per address: with a limit, it holds every one.
    @Test func aPerAddressLimitKeepsEveryConnectionInLibmicrohttpd() async throws {
        let handler = ReadingHandler()
        let server = try Self.startServer(handler, perAddressLimit: 4)
        defer { stopLater(server) }
        let connection = try HTTPConnection(port: server.port)
        #expect(try await connection.send("GET", "/small").text == "small")
        #expect(server.connectionsInReadLoops == 0)
    }
}
