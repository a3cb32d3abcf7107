import Glibc
import Platform
import TimeZones

/// A small value-type logger: one line per event on standard error, with a timestamp, the
/// level and the label. Passed to whoever logs; tests give it a sink that collects lines.
public struct Logger: Sendable {
    /// The standard level names (as in swift-log), least to most severe.
    public enum Level: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        public init?(name: String) {
            guard let level = Level.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = level
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    public var label: String
    public var minimumLevel: Level
    private let sink: @Sendable (String) -> Void
    private let clock: @Sendable () -> Timestamp

    public init(
        label: String, minimumLevel: Level = .info,
        clock: @escaping @Sendable () -> Timestamp = Timestamp.now,
        sink: @escaping @Sendable (String) -> Void = StandardStream.error.writeLine
    ) {
        self.label = label
        self.minimumLevel = minimumLevel
        self.clock = clock
        self.sink = sink
    }

    public func log(_ level: Level, _ message: @autoclosure () -> String) {
        guard level >= minimumLevel else { return }
        sink("\(clock().rfc3339) \(level) [\(label)] \(Self.oneLine(message()))")
    }

    /// `message` with every control character escaped (`\n`, `\u{1b}`, …), and the Unicode line
    /// and paragraph separators: a log line is one line, whatever a client put in a path, a
    /// header or a body that a message quotes, so no request can forge a line of its own.
    static func oneLine(_ message: String) -> String {
        func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
                || scalar.value == 0x2029
        }
        // The usual line (a command's has an arrow) is checked over its UTF-8 bytes, no scalars made.
        if message.utf8.withContiguousStorageIfAvailable({ !hasUnsafeScalar($0) }) == true { return message }
        guard message.unicodeScalars.contains(where: isUnsafe) else { return message }
        var escaped = ""
        for scalar in message.unicodeScalars {
            if isUnsafe(scalar) {
                switch scalar {
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                case "\t": escaped += "\\t"
                default: escaped += "\\u{\(String(scalar.value, radix: 16))}"
                }
            } else {
                escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// Whether valid UTF-8 `bytes` encode a scalar `oneLine` escapes: a C0 control or DEL (one
    /// byte), a C1 control (`C2 80`…`C2 9F`), U+2028 or U+2029 (`E2 80 A8`, `E2 80 A9`).
    private static func hasUnsafeScalar(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == 0x7F { return true }
            if byte == 0xC2, index + 1 < bytes.count, (0x80...0x9F).contains(bytes[index + 1]) { return true }
            if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, (0xA8...0xA9).contains(bytes[index + 2])
            {
                return true
            }
            index += 1
        }
        return false
    }

    public func trace(_ message: @autoclosure () -> String) { log(.trace, message()) }
    public func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
    public func info(_ message: @autoclosure () -> String) { log(.info, message()) }
    public func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
    public func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
    public func error(_ message: @autoclosure () -> String) { log(.error, message()) }
    public func critical(_ message: @autoclosure () -> String) { log(.critical, message()) }
}

/// Standard output or error, written line by line with write(2): unbuffered, so a line is out
/// before the next step (tests wait for `listening on …`), and one write per line keeps lines
/// from different threads whole.
public enum StandardStream: Sendable {
    case output, error

    public func writeLine(_ line: String) {
        write(Array(line.utf8) + [UInt8(ascii: "\n")])
    }

    /// Writes all of `bytes`.
    public func write(_ bytes: [UInt8]) {
        var pending = bytes
        while !pending.isEmpty {
            guard
                case .success(let written) = systemCall({ Glibc.write(self == .output ? 1 : 2, pending, pending.count) }
                ),
                written > 0
            else { return }  // Nowhere left to report a failing stream.
            pending.removeFirst(written)
        }
    }
}
