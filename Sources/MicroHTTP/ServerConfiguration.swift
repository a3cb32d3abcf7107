import CMicroHTTPD
import Glibc

/// How an `HTTPServer` listens and what it allows each client. Every libmicrohttpd default that
/// matters in production (no timeout, ~1020 connections, 32 KiB per connection) is set explicitly.
public struct ServerConfiguration: Sendable {
    /// Address to bind: an IPv4 or IPv6 literal or a host name (`0.0.0.0`, `::`, `localhost`).
    public var host: String
    /// TCP port; 0 binds an ephemeral port, readable afterwards as `HTTPServer.port`.
    public var port: Int
    /// Worker threads, each with its own epoll loop. Defaults to one per online core.
    public var threads: Int
    /// An idle connection is closed after this many seconds, and a request (headers, then body)
    /// must arrive within it, however slowly it trickles in (see `ConnectionWatchdog`).
    public var connectionTimeoutSeconds: Int
    /// Connections open at once, over all threads; further clients are refused at accept.
    public var connectionLimit: Int
    /// Connections open at once from one IP address; 0 means no per-address limit.
    public var perAddressConnectionLimit: Int
    /// Memory pool per connection for the request line, headers and response headers. Request
    /// headers may use about half of it (16 KiB: ~8 KiB, nginx's per-line default); larger ones
    /// are answered 431. libmicrohttpd clears the pool after every request and keeps it while a
    /// connection idles, so it costs CPU per request and RSS per keep-alive connection.
    public var connectionMemoryLimit: Int
    /// Largest request body accepted; a larger one is answered 413 without being read whole.
    public var maxBodySize: Int
    /// Length of the kernel's queue of connections not yet accepted. The kernel caps it at
    /// `net.core.somaxconn` (4,096 by default). A client that finds the queue full tries again
    /// after 1 s, then 2 s and 4 s more: screens reconnecting at once after a restart need room.
    public var listenBacklog: Int
    /// Whether the acceptor and the read loops answer event streams and keep-alive reads outside
    /// libmicrohttpd (docs/ARCHITECTURE.md). Off, libmicrohttpd listens on the socket itself and
    /// answers everything; the bytes on the wire are the same either way.
    public var fastPaths: Bool
    /// libmicrohttpd's MHD_USE_TURBO: read and write before asking epoll, saving syscalls.
    public var turbo: Bool
    /// On `stop()`, how long requests in progress may take to finish before they are cut off.
    public var shutdownGracePeriod: Duration
    /// What the timeouts run on: the system's clock, or a test's (`ServerClock.manual()`), which
    /// also leaves libmicrohttpd no idle timeout of its own, on a clock no test could move.
    public var clock: ServerClock
    /// Receives problems the server meets after it starts: libmicrohttpd's own messages
    /// (prefixed `libmicrohttpd: `, mostly about misbehaving clients: notices) and a too-low
    /// open-file limit (a warning). One line each.
    public var errorLog: (@Sendable (ServerLogLevel, String) -> Void)?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        threads: Int = ServerConfiguration.onlineCores,
        connectionTimeoutSeconds: Int = 15,
        connectionLimit: Int = 16384,
        perAddressConnectionLimit: Int = 0,
        connectionMemoryLimit: Int = 16 * 1024,
        maxBodySize: Int = 16 * 1024,
        listenBacklog: Int = 16384,
        fastPaths: Bool = true,
        turbo: Bool = false,
        shutdownGracePeriod: Duration = .seconds(2),
        clock: ServerClock = .system,
        errorLog: (@Sendable (ServerLogLevel, String) -> Void)? = nil
    ) {
        self.clock = clock
        self.host = host
        self.port = port
        self.threads = threads
        self.connectionTimeoutSeconds = connectionTimeoutSeconds
        self.connectionLimit = connectionLimit
        self.perAddressConnectionLimit = perAddressConnectionLimit
        self.connectionMemoryLimit = connectionMemoryLimit
        self.maxBodySize = maxBodySize
        self.listenBacklog = listenBacklog
        self.fastPaths = fastPaths
        self.turbo = turbo
        self.shutdownGracePeriod = shutdownGracePeriod
        self.errorLog = errorLog
    }

    /// Cores this process may run on: its CPU affinity (which `taskset` and container cpusets
    /// narrow), else the cores online.
    public static var onlineCores: Int {
        let allowed = Int(cmhd_allowed_cpu_count())
        return allowed > 0 ? allowed : max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}

/// How much a server message matters to an operator.
public enum ServerLogLevel: Sendable {
    case notice, warning
}
