import Glibc
import Platform

/// Why an `HTTPServer` could not start, in words an operator can act on.
public enum HTTPServerError: Error, Equatable, CustomStringConvertible {
    /// The host is neither an address literal nor a name that resolves.
    case cannotResolve(host: String, reason: String)
    /// A socket for the address could not be created, bound or put to listen.
    case cannotListen(host: String, port: Int, errno: Int32)
    /// libmicrohttpd refused to start; its error log has the details.
    case daemonDidNotStart
    /// A configuration value libmicrohttpd cannot take.
    case invalidConfiguration(String)
    /// The libmicrohttpd loaded at run time is older than the one this server was checked with.
    case unsupportedLibrary(found: String)

    public var description: String {
        switch self {
        case .cannotResolve(let host, let reason):
            "cannot resolve host '\(host)': \(reason)"
        case .cannotListen(let host, let port, let code):
            "cannot listen on \(host):\(port): \(Errno(code).explained)"
        case .daemonDidNotStart:
            "libmicrohttpd did not start (see its messages above)"
        case .invalidConfiguration(let message):
            "invalid server configuration: \(message)"
        case .unsupportedLibrary(let found):
            "libmicrohttpd \(found) is too old; \(LibraryVersion.minimum) or later is needed "
                + "(Debian 12: apt-get install libmicrohttpd12)"
        }
    }
}

/// The libmicrohttpd this server needs: 0.9.75, the first with the fix for CVE-2023-27371 in
/// Debian's build and the version docs/ARCHITECTURE.md's calling convention was checked on.
enum LibraryVersion {
    static let minimum = "0.9.75"

    /// "0.9.75" and later; anything unparsable is refused.
    static func isSupported(_ version: String) -> Bool {
        guard let found = parts(version), let needed = parts(minimum) else { return false }
        return found.lexicographicallyPrecedes(needed) == false
    }

    private static func parts(_ version: String) -> [Int]? {
        let numbers = version.split(separator: ".").map { Int($0) }
        guard numbers.count == 3, numbers.allSatisfy({ $0 != nil }) else { return nil }
        return numbers.compactMap { $0 }
    }
}
