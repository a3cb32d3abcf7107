import Glibc
import Platform

/// SIGTERM and SIGINT as something to wait for: a handler writes the signal's number to a pipe
/// that `wait()` reads.
///
/// A handler, not a signal mask and `sigwait`: a mask must be set before any thread exists, and
/// some threads start before `main` (a sanitizer's runtime, a preloaded library); a signal that
/// lands on one of them would take its default action and kill the process. A handler runs on
/// whichever thread the kernel picks.
public enum StopSignals {
    /// Installs the handlers. Call once, first thing in `main`.
    public static func install() {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { return }
        pipeRead = descriptors[0]
        pipeWrite = descriptors[1]
        signal(SIGTERM, record)
        signal(SIGINT, record)
    }

    /// Blocks until SIGTERM or SIGINT arrives, and returns which.
    public static func wait() -> Int32 {
        var number: UInt8 = 0
        guard case .success(1) = systemCall({ read(pipeRead, &number, 1) }) else { return SIGTERM }
        return Int32(number)
    }

    public static func name(_ signal: Int32) -> String {
        signal == SIGINT ? "SIGINT" : "SIGTERM"
    }
}

// Set once by `install()` before any signal can arrive; read by the handler (async-signal-safe:
// it only loads an integer and calls write).
nonisolated(unsafe) private var pipeRead: Int32 = -1
nonisolated(unsafe) private var pipeWrite: Int32 = -1

private let record: @convention(c) (Int32) -> Void = { signal in
    var number = UInt8(truncatingIfNeeded: signal)
    _ = write(pipeWrite, &number, 1)
}
