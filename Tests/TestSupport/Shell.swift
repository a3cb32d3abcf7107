import Foundation

/// `text` as one word for /bin/sh.
public func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

/// `/bin/sh -c command`, waited for; its exit status.
func runShell(_ command: String) -> Int32 {
    var pid: pid_t = 0
    guard spawnShell(command, pid: &pid) else { return 127 }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status >> 8) & 0xFF
}

/// `/bin/sh -c command` started, reading `standardInput` when given; its process in `pid`.
func spawnShell(_ command: String, standardInput: Int32? = nil, pid: inout pid_t) -> Bool {
    let words: [String] = ["/bin/sh", "-c", command]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let standardInput { posix_spawn_file_actions_adddup2(&actions, standardInput, 0) }
    closeInheritedDescriptors(&actions)
    return posix_spawn(&pid, "/bin/sh", &actions, nil, argv, environ) == 0
}

/// Adds "close every descriptor from 3 up" to `actions`: a child must not keep the test
/// process's sockets open (a client the test closed would stay connected through it). glibc's
/// posix_spawn_file_actions_addclosefrom_np (2.34) is a GNU extension Swift does not import.
func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return }
    let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
    _ = addCloseFrom(&actions, 3)
}

/// A shell that outlives nothing of the test process's: it reads a pipe whose write end only
/// this process holds, so the pipe reaches its end when this process lets go of it or dies, however
/// it dies (a crash, a SIGKILL, an interrupted run). `command` then learns of it from its `read`.
struct Watcher: Sendable {
    private let shell: pid_t
    private let pipe: Int32

    /// Starts `/bin/sh -c command`, its standard input the read end of the pipe. Nil when no pipe
    /// or no shell could be had.
    init?(_ command: String) {
        var ends: [Int32] = [-1, -1]
        guard Glibc.pipe(&ends) == 0 else { return nil }
        _ = fcntl(ends[1], F_SETFD, FD_CLOEXEC)  // held here alone, not by other children
        var shell: pid_t = 0
        let spawned = spawnShell(command, standardInput: ends[0], pid: &shell)
        close(ends[0])
        guard spawned else {
            close(ends[1])
            return nil
        }
        (self.shell, self.pipe) = (shell, ends[1])
    }

    /// Closes the pipe, as the end of this process would, and waits for the shell to have acted.
    func end() {
        close(pipe)
        reap()
    }

    /// Stops the shell before it can act (no write to the pipe: a shell gone already would
    /// raise SIGPIPE here), then closes the pipe.
    func dismiss() {
        kill(shell, SIGKILL)  // still our unreaped child: the number cannot have been reused
        close(pipe)
        reap()
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(shell, &status, 0) < 0 && errno == EINTR {}
    }
}

/// What `/bin/sh -c command` printed on its standard output, and its exit status.
public func shellOutput(_ command: String) throws -> (status: Int32, output: String) {
    try TestTier.needs("a child process")
    let file = try temporaryDirectory().appendingPathComponent("output")
    let status = runShell("(\(command)) > \(shellQuoted(file.path))")
    return (status, textOfFile(atPath: file.path) ?? "")
}
