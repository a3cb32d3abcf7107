import TimeZones

/// A screen's name, as the page, the component and other clients give it (`?screen=`,
/// `X-Screen-Id`): `[a-z0-9][a-z0-9._-]{0,63}` (docs/SCREENS.md, "The fleet").
public struct ScreenID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    /// Nil when `text` is not a screen id.
    public init?(_ text: String) {
        // Checked in place: an audience's read checks its name, and must not allocate for it.
        guard text.utf8.withContiguousStorageIfAvailable(Self.isValid) ?? Self.isValid(text.utf8) else { return nil }
        rawValue = text
    }

    private static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        guard (1...64).contains(bytes.count), let first = bytes.first, isLeading(first) else { return false }
        return bytes.dropFirst().allSatisfy(isAllowed)
    }

    public var description: String { rawValue }

    /// What an invalid id is told, with the rule.
    public static let rule = "a screen id is 1 to 64 of a-z, 0-9, '.', '_' and '-', starting with a letter or digit"

    private static func isLeading(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        isLeading(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
    }
}

/// Where a screen stands (docs/SCREENS.md, "The fleet").
public enum ScreenState: Sendable, Equatable {
    case online
    case offline
    case outOfStep(OutOfStepReason)

    /// As the API writes it: `online`, `offline`, `out-of-step`.
    public var name: String {
        switch self {
        case .online: "online"
        case .offline: "offline"
        case .outOfStep: "out-of-step"
        }
    }
}

public enum OutOfStepReason: String, Sendable, Equatable {
    case wrongBanner = "wrong-banner"
    case late, early, frozen
}

extension ScreenState {
    /// A screen's state by the rules: offline once not heard from for longer than `timeout`
    /// (a screen holding an event stream is heard from all the while); else out of step when its
    /// latest receipt says so (`outOfStep`) or it has stopped flipping (`frozen`); else online.
    public static func of(
        lastSeen: Timestamp, now: Timestamp, timeout: Duration, outOfStep: OutOfStepReason?, frozen: Bool
    ) -> ScreenState {
        guard isHeard(lastSeen: lastSeen, now: now, timeout: timeout) else { return .offline }
        if let outOfStep { return .outOfStep(outOfStep) }
        return frozen ? .outOfStep(.frozen) : .online
    }

    /// Whether a screen last seen at `lastSeen` is still heard from: not offline.
    public static func isHeard(lastSeen: Timestamp, now: Timestamp, timeout: Duration) -> Bool {
        now - lastSeen <= timeout
    }
}

extension StepVerdict {
    /// Why a screen whose latest receipt has this verdict is out of step; nil when it is not.
    public var outOfStep: OutOfStepReason? {
        switch self {
        case .late: .late
        case .early: .early
        case .wrongBanner: .wrongBanner
        case .inStep, .unknown: nil
        }
    }

    /// How long after the carousel's change the screen flipped (negative: before it); nil when
    /// it showed another banner or the history does not reach back.
    public var lateness: Duration? {
        switch self {
        case .inStep(let lateness), .late(by: let lateness): lateness
        case .early(by: let earliness): .zero - earliness
        case .wrongBanner, .unknown: nil
        }
    }
}
