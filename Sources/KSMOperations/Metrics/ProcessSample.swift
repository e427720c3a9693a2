import Foundation

#if canImport(Glibc)
    import Glibc
    import KSMService
#endif

/// The standard `process_*` figures of this process, read from `/proc/self` at scrape time.
///
/// swift-prometheus 2.4 has no process collector; these are the four series every Prometheus
/// client exports (plus the descriptor limit), read the way the Go and Python clients read them.
/// Nil fields: not on Linux, or `/proc` unreadable.
public struct ProcessSample: Sendable, Hashable {
    /// User + system CPU time, in seconds.
    package var cpuSeconds: Double
    package var residentBytes: Int
    package var openFileDescriptors: Int
    package var maxFileDescriptors: Int
    /// Seconds since the Unix epoch.
    package var startTimeSeconds: Double

    /// Reads `/proc/self/stat`, `/proc/stat` (boot time) and `/proc/self/fd`. Returns nil where
    /// `/proc` is missing or unreadable.
    package static func read() -> ProcessSample? {
        #if os(Linux)
            // Fields after "pid (comm) " (CPUAccount reads the same file): index 0 is field 3 (state);
            // utime is field 14, stime 15, starttime 22, rss 24 (proc(5)).
            guard let fields = CPUAccount.statFields("/proc/self/stat"), fields.count > 21, let utime = Double(fields[11]),
                let stime = Double(fields[12]), let start = Double(fields[19]), let rssPages = Int(fields[21])
            else { return nil }
            let ticks = Double(CPUAccount.ticksPerSecond)
            var limit = rlimit()
            let maxFDs = getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Int(clamping: limit.rlim_cur) : 0
            return ProcessSample(
                cpuSeconds: (utime + stime) / ticks, residentBytes: rssPages * pageSize,
                openFileDescriptors: countOpenFileDescriptors(), maxFileDescriptors: maxFDs,
                startTimeSeconds: bootTime + start / ticks)
        #else
            return nil
        #endif
    }

    #if os(Linux)
        private static let pageSize = max(1, sysconf(Int32(_SC_PAGESIZE)))

        /// The boot time from `/proc/stat`, read once: it and the start time never change.
        private static let bootTime: Double =
            (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("btime ") }
            .flatMap { Double($0.dropFirst(6).drop { $0 == " " }) } ?? 0

        private static func countOpenFileDescriptors() -> Int {
            guard let dir = opendir("/proc/self/fd") else { return 0 }
            defer { closedir(dir) }
            var count = 0
            while let entry = readdir(dir) {
                let isDot = withUnsafeBytes(of: entry.pointee.d_name) { $0.first == UInt8(ascii: ".") }
                if !isDot { count += 1 }
            }
            // The directory stream itself holds one descriptor while counting.
            return max(0, count - 1)
        }
    #endif
}
