import Platform

/// The `process_*` families, named, typed and described as Prometheus' own client libraries write
/// them, read from /proc at each scrape (`ProcessStats`).
public enum ProcessMetrics {
    public static func write(to text: inout String) {
        let process = ProcessStats.now()
        let families: [(name: String, type: String, help: String, value: Double?)] = [
            (
                "process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
                process.cpuSeconds
            ),
            (
                "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                process.residentBytes.map(Double.init)
            ),
            (
                "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                process.virtualBytes.map(Double.init)
            ),
            ("process_open_fds", "gauge", "Number of open file descriptors.", process.openDescriptors.map(Double.init)),
            (
                "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                process.maxDescriptors.map(Double.init)
            ),
            (
                "process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
                process.startTimeSeconds
            ),
        ]
        // A family whose value is unknown (no /proc) is left out rather than reported as 0.
        for family in families {
            guard let value = family.value else { continue }
            text +=
                "# HELP \(family.name) \(family.help)\n# TYPE \(family.name) \(family.type)\n\(family.name) \(value)\n"
        }
    }
}
