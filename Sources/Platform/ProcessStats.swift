import Glibc

/// This process's use of the machine, read from /proc as Prometheus' own client libraries read
/// it for their `process_*` metrics. Nil where the kernel does not say.
public struct ProcessStats: Sendable {
    public var residentBytes: Int?
    public var virtualBytes: Int?
    /// User and system CPU time.
    public var cpuSeconds: Double?
    /// When the process started, in seconds since the Unix epoch.
    public var startTimeSeconds: Double?
    public var openDescriptors: Int?
    /// The soft limit on open descriptors.
    public var maxDescriptors: Int?

    public static func now() -> ProcessStats {
        var stats = ProcessStats()
        let page = sysconf(Int32(_SC_PAGESIZE))
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        if let statm = fields("/proc/self/statm"), statm.count >= 2, let size = Int(statm[0]),
            let resident = Int(statm[1])
        {
            stats.virtualBytes = size * page
            stats.residentBytes = resident * page
        }
        // /proc/self/stat: "pid (comm) state …"; comm may hold spaces, so fields count from its ")".
        // After it: state is field 3, utime 14, stime 15, starttime 22 (proc(5)).
        if case .success(let bytes) = SmallFile.read("/proc/self/stat"),
            let close = bytes.lastIndex(of: UInt8(ascii: ")"))
        {
            let after = String(decoding: bytes[(close + 1)...], as: UTF8.self).split(separator: " ")
            if after.count > 19, let user = Double(after[11]), let system = Double(after[12]), ticks > 0 {
                stats.cpuSeconds = (user + system) / ticks
                if let started = Double(after[19]), let boot = bootTime {
                    stats.startTimeSeconds = boot + started / ticks
                }
            }
        }
        if let directory = opendir("/proc/self/fd") {
            var count = 0
            while let entry = readdir(directory) {
                if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { count += 1 }
            }
            closedir(directory)
            stats.openDescriptors = count - 1  // the directory's own descriptor
        }
        var limit = rlimit()
        if getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 { stats.maxDescriptors = Int(limit.rlim_cur) }
        return stats
    }

    private static func fields(_ path: String) -> [Substring]? {
        guard case .success(let bytes) = SmallFile.read(path) else { return nil }
        return String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
    }

    /// The boot time, from the `btime` line of /proc/stat: read once, it does not change.
    private static let bootTime: Double? = {
        guard case .success(let bytes) = SmallFile.read("/proc/stat") else { return nil }
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(line.dropFirst("btime ".count))
        }
        return nil
    }()
}
