import Foundation
import Synchronization

/// The real `banner-server` executable, run as a child process with a clean environment.
public final class ServerProcess: @unchecked Sendable {
    public let process = Process()
    private let output = CapturedOutput()

    private final class CapturedOutput: Sendable {
        let streams = Mutex<(standardOutput: [UInt8], standardError: [UInt8])>(([], []))
    }

    /// `banner-server`, built next to the test bundle by `swift build --build-tests`.
    public static var executable: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("banner-server")
    }

    /// Starts the server. Only `environment` is passed (plus PATH): the test runner's own
    /// `CAROUSEL_*` variables must not leak in.
    public init(
        executable: URL = ServerProcess.executable, arguments: [String], environment: [String: String] = [:],
        workingDirectory: URL? = nil
    ) throws {
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { mine, _ in mine }
        if let workingDirectory { process.currentDirectoryURL = workingDirectory }
        let standardOutput = Pipe()
        let standardError = Pipe()
        process.standardOutput = standardOutput
        process.standardError = standardError
        standardOutput.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.streams.withLock { $0.standardOutput.append(contentsOf: data) }
        }
        standardError.fileHandleForReading.readabilityHandler = { [output] handle in
            let data = handle.availableData
            output.streams.withLock { $0.standardError.append(contentsOf: data) }
        }
        try process.run()
    }

    public var standardOutput: String { output.streams.withLock { String(decoding: $0.standardOutput, as: UTF8.self) } }
    public var standardError: String { output.streams.withLock { String(decoding: $0.standardError, as: UTF8.self) } }

    /// The port from the `listening on http://HOST:PORT` line, once it is printed.
    public func waitForPort(seconds: Double = 20) async throws -> Int {
        var port: Int?
        _ = await eventually(within: seconds) {
            port = standardOutput.split(separator: "\n").first { $0.hasPrefix("listening on http://") }
                .flatMap { $0.split(separator: ":").last }.flatMap { Int($0) }
            return port != nil || !process.isRunning
        }
        guard let port else {
            throw HTTPClientError.protocolViolation(
                "no 'listening on' line; stdout: \(standardOutput) stderr: \(standardError)")
        }
        return port
    }

    public func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// The exit status, or nil if the process is still running after `seconds`.
    public func waitForExit(seconds: Double) async -> Int32? {
        guard await eventually(within: seconds, { !process.isRunning }) else { return nil }
        process.waitUntilExit()
        // Give the pipes' readers a moment to take the last bytes.
        try? await Task.sleep(for: .milliseconds(200))
        return process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

/// A file in a fresh temporary directory, for configurations written by a test.
public func temporaryFile(named name: String = "carousel.json", contents: String) throws -> URL {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("carousel-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let file = directory.appendingPathComponent(name)
    try contents.write(to: file, atomically: true, encoding: .utf8)
    return file
}
