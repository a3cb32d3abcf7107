import Foundation
import Threading

/// The real `banner-server` executable (or another program), run as a child process with a clean
/// environment and its output captured.
///
/// Spawned with posix_spawn rather than Foundation's Process, whose start-up reads past a buffer
/// under AddressSanitizer (`make test-sanitize` runs these tests too).
public final class ServerProcess: @unchecked Sendable {
    public let processIdentifier: pid_t
    private let output = Lock((standardOutput: [UInt8](), standardError: [UInt8]()))
    /// The exit status once reaped: the code, or 128 + the signal number.
    private let exitStatus = Lock<Int32?>(nil)
    /// Output readers not yet at the end of their pipe: once 0, all the output is in.
    private let openReaders = Lock(2)
    /// Kills the process if the test process dies first (an interrupted or crashed run would
    /// otherwise leave its servers running); dismissed when this object goes.
    private let watcher: Watcher?

    /// `banner-server`, built next to the test bundle by `swift build --build-tests`.
    public static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("banner-server")
    }

    /// Starts the program. Only `environment` is passed, plus PATH, the sanitizers' options and
    /// SWIFT_BACKTRACE (`make test-sanitize` sets them for the child too): the test runner's own
    /// `CAROUSEL_*` variables must not leak in. Without a `workingDirectory`, it runs in a fresh
    /// empty one (where the default store, `data/carousel.db`, is then created).
    public init(
        executable: URL = ServerProcess.executable, arguments: [String], environment: [String: String] = [:],
        workingDirectory: URL? = nil
    ) throws {
        try TestTier.needs("a child process")
        var standardOutput: [Int32] = [0, 0]
        var standardError: [Int32] = [0, 0]
        guard pipe(&standardOutput) == 0, pipe(&standardError) == 0 else { throw POSIXError(.EMFILE) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, standardOutput[1], 1)
        posix_spawn_file_actions_adddup2(&actions, standardError[1], 2)
        for descriptor in standardOutput + standardError { posix_spawn_file_actions_addclose(&actions, descriptor) }
        closeInheritedDescriptors(&actions)

        // The test runner's threads block signals; the child must start with the defaults.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGTERM, SIGINT, SIGPIPE] { sigaddset(&defaults, signal) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        // posix_spawn_file_actions_addchdir_np needs _GNU_SOURCE; env -C changes directory instead.
        let directory = try workingDirectory ?? temporaryDirectory()
        let command = ["/usr/bin/env", "-C", directory.path, executable.path]
        let argv = (command + arguments).map { strdup($0) } + [nil]
        var inherited = ["PATH": "/usr/bin:/bin"]
        for name in ["ASAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS", "UBSAN_OPTIONS", "SWIFT_BACKTRACE"] {
            if let value = ProcessInfo.processInfo.environment[name] { inherited[name] = value }
        }
        let envp = environment.merging(inherited) { mine, _ in mine }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for string in argv + envp { free(string) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, command[0], &actions, &attributes, argv, envp)
        close(standardOutput[1])
        close(standardError[1])
        guard status == 0 else {
            close(standardOutput[0])
            close(standardError[0])
            throw POSIXError(POSIXErrorCode(rawValue: status) ?? .ENOENT)
        }
        processIdentifier = pid
        watcher = Watcher("read line; kill -KILL \(pid) 2>/dev/null")
        collect(standardOutput[0]) { output, bytes in output.standardOutput += bytes }
        collect(standardError[0]) { output, bytes in output.standardError += bytes }
    }

    /// Reads a pipe to its end on a thread of its own: the read blocks for the process's life,
    /// which would hold a Dispatch worker (a limited pool that the test clients use).
    private func collect(
        _ descriptor: Int32,
        into append: @escaping @Sendable (inout (standardOutput: [UInt8], standardError: [UInt8]), [UInt8]) -> Void
    ) {
        Thread { [output, openReaders] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = read(descriptor, &buffer, buffer.count)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { break }
                let chunk = Array(buffer[..<count])
                output.withLock { append(&$0, chunk) }
            }
            close(descriptor)
            openReaders.withLock { $0 -= 1 }
        }.start()
    }

    public var standardOutput: String { output.withLock { String(decoding: $0.standardOutput, as: UTF8.self) } }
    public var standardError: String { output.withLock { String(decoding: $0.standardError, as: UTF8.self) } }

    /// False once the process has exited (and then it is reaped).
    public var isRunning: Bool {
        exitStatus.withLock { exitStatus in
            guard exitStatus == nil else { return false }
            var status: Int32 = 0
            guard waitpid(processIdentifier, &status, WNOHANG) == processIdentifier else { return true }
            let signal = status & 0x7F
            exitStatus = signal == 0 ? (status >> 8) & 0xFF : 128 + signal
            return false
        }
    }

    /// The port from the `listening on http://HOST:PORT` line, once it is printed.
    public func waitForPort(seconds: Double = 20) async throws -> Int {
        var port: Int?
        _ = await eventually(within: seconds) {
            port = standardOutput.split(separator: "\n").first { $0.hasPrefix("listening on http://") }
                .flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
            return port != nil || !isRunning
        }
        guard let port else {
            throw HTTPClientError.protocolViolation(
                "no 'listening on' line; stdout: \(standardOutput) stderr: \(standardError)")
        }
        return port
    }

    /// The port from Python's `Serving HTTP on 127.0.0.1 port N` line.
    public func waitForPythonPort(seconds: Double = 20) async throws -> Int {
        var port: Int?
        _ = await eventually(within: seconds) {
            port = (standardOutput + standardError).firstMatch(of: #/ port (\d+) /#).flatMap { Int($0.1) }
            return port != nil
        }
        guard let port else { throw HTTPClientError.protocolViolation("no port from python: \(standardError)") }
        return port
    }

    /// True once standard error contains `text` (its reader runs apart from standard output's).
    public func standardErrorShows(_ text: String, within seconds: Double = 10) async -> Bool {
        await eventually(within: seconds) { standardError.contains(text) }
    }

    public func signal(_ signal: Int32) {
        kill(processIdentifier, signal)
    }

    /// The exit status (the code, or 128 + the signal), or nil if still running after `seconds`
    /// (times `sanitizerAllowance`). Returns once both output readers have reached the end of
    /// their pipes, so `standardOutput` and `standardError` are then complete.
    public func waitForExit(seconds: Double) async -> Int32? {
        guard await eventually(within: seconds, { !isRunning }) else { return nil }
        // The pipes close when the process exits; their readers finish soon after.
        guard await eventually(within: 30, { openReaders.withLock { $0 == 0 } }) else { return nil }
        return exitStatus.withLock { $0 }
    }

    /// Kills a process still running and reaps it on a thread of its own: the kernel may take a
    /// while to tear down a server with many threads, and whichever thread lets go of this object
    /// may be one of the pool's (`offThePool`). Its watcher is dismissed once it is reaped.
    deinit {
        let (process, running, watcher) = (processIdentifier, isRunning, watcher)
        if running { kill(process, SIGKILL) }
        offThePoolLater {
            if running {
                var status: Int32 = 0
                while waitpid(process, &status, 0) < 0 && errno == EINTR {}
            }
            watcher?.dismiss()
        }
    }
}

/// How much longer than in a plain build a deadline that stands for a promise ("stops within 5 s")
/// may take: ThreadSanitizer and AddressSanitizer builds run several times slower.
public let sanitizerAllowance: Double = {
    let symbols: [String] = ["__tsan_init", "__asan_init"]
    let instrumented = symbols.contains { name in dlsym(nil, name) != nil }  // nil: RTLD_DEFAULT
    return instrumented ? 5 : 1
}()
