import Foundation

/// CPU time by component, read from Linux's /proc, so a benchmark can say where the time between
/// its end-to-end rate and the in-process rate went: the crypto pool, Swift's pool (worker and
/// benchmark client), librdkafka's client threads, the in-process mock broker, and redis-server.
///
/// Thread times come from `/proc/self/task/<tid>/stat` and are grouped by thread name, which is why
/// the crypto threads and librdkafka's threads carry names. Clock-tick resolution (10 ms), so it is
/// meant for phases of seconds. Elsewhere than Linux every reading is empty.
package struct CPUAccount: Sendable, Equatable {
    /// Seconds of user plus system time per component.
    package var seconds: [String: Double]
    /// A finer split of some components (`workers/crypto`, `workers/swift`, ...), already counted in
    /// ``seconds``: never added to totals.
    package var detail: [String: Double]

    package init(seconds: [String: Double] = [:], detail: [String: Double] = [:]) {
        self.seconds = seconds
        self.detail = detail
    }

    /// This process's threads, grouped by ``component(ofThread:)``, plus whole other processes
    /// (redis-server, worker processes) under the given names; the processes named in
    /// `threadSplit` are also split by thread component (`workers/crypto`, `workers/swift`, ...) in ``detail``.
    /// Threads that exit between two samples lose their time, so split figures are lower bounds.
    package static func sample(processes: [String: [Int32]] = [:], threadSplit: Set<String> = []) -> CPUAccount {
        var seconds: [String: Double] = [:]
        var detail: [String: Double] = [:]
        for (component, time) in threadTimes(process: "self") { seconds[component, default: 0] += time }
        for (name, pids) in processes {
            for pid in pids {
                if let time = cpuSeconds(statPath: "/proc/\(pid)/stat") { seconds[name, default: 0] += time }
                guard threadSplit.contains(name) else { continue }
                // Also by thread, as `<name>/crypto` and so on: what a worker spends beside RSA.
                for (component, time) in threadTimes(process: "\(pid)") { detail["\(name)/\(component)", default: 0] += time }
            }
        }
        return CPUAccount(seconds: seconds, detail: detail)
    }

    /// Each thread of `/proc/<process>` with its component (``component(ofThread:)``) and CPU seconds.
    private static func threadTimes(process: String) -> [(component: String, seconds: Double)] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
        return tasks.compactMap { task in
            guard let name = try? String(contentsOfFile: "/proc/\(process)/task/\(task)/comm", encoding: .utf8),
                let time = cpuSeconds(statPath: "/proc/\(process)/task/\(task)/stat")
            else { return nil }
            return (component(ofThread: name.trimmingCharacters(in: .whitespacesAndNewlines)), time)
        }
    }

    /// The component a thread belongs to, by the name it set: `ksm-crypto-N` (the pool), `rdk:mock*`
    /// (the mock broker), other `rdk:` threads (librdkafka clients), anything else (Swift's pool,
    /// the admin thread, the main thread).
    package static func component(ofThread name: String) -> String {
        if name.hasPrefix("ksm-crypto") { return "crypto" }
        if name.hasPrefix("rdk:mock") { return "kafka-broker" }
        if name.hasPrefix("rdk:") { return "kafka-client" }
        return "swift"
    }

    /// utime + stime of a /proc stat file, in seconds. The fields after the command name, which is
    /// in parentheses and may itself contain spaces or parentheses, so the last `)` is the anchor.
    static func cpuSeconds(statPath: String) -> Double? {
        // After ")": state(3) ppid(4) ... utime is field 14 and stime field 15 of the whole line.
        guard let fields = statFields(statPath), fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(ticksPerSecond)
    }

    /// The fields of a /proc stat file after the command name: index 0 is field 3 (state).
    package static func statFields(_ statPath: String) -> [Substring]? {
        guard let text = try? String(contentsOfFile: statPath, encoding: .utf8), let close = text.lastIndex(of: ")") else { return nil }
        return text[text.index(after: close)...].split(separator: " ")
    }

    package static let ticksPerSecond: Int = {
        #if os(Linux)
            return max(1, sysconf(Int32(_SC_CLK_TCK)))
        #else
            return 100
        #endif
    }()

    /// What was spent between two samples.
    package static func - (after: CPUAccount, before: CPUAccount) -> CPUAccount {
        func spent(_ after: [String: Double], _ before: [String: Double]) -> [String: Double] {
            var out: [String: Double] = [:]
            for (key, value) in after { out[key] = max(0, value - (before[key] ?? 0)) }
            return out
        }
        return CPUAccount(seconds: spent(after.seconds, before.seconds), detail: spent(after.detail, before.detail))
    }

    /// Microseconds per job, per component and in total, rounded to 1 µs.
    package func microsecondsPerJob(_ jobs: Int) -> [String: Double] {
        guard jobs > 0 else { return [:] }
        var out = seconds.mapValues { ($0 / Double(jobs) * 1e6).rounded() }
        for (key, value) in detail { out[key] = (value / Double(jobs) * 1e6).rounded() }
        out["total"] = (seconds.values.reduce(0, +) / Double(jobs) * 1e6).rounded()
        return out
    }
}
