import Foundation

/// The CPUs a process or thread may run on, as Linux reports them in `/proc`, and the CPU-list
/// syntax `taskset` and `/proc` share (`0,2,4-7`).
///
/// Why `/proc` and not `sched_getaffinity`: Swift's Glibc module does not expose it, and the status
/// file says the same for any process or thread, which the storm bench needs for its workers.
package enum CPUAffinity {
    /// A CPU list that does not parse, naming the part.
    package struct InvalidList: Error, CustomStringConvertible {
        package let description: String
    }

    /// Parses a CPU list: comma-separated CPU numbers and `first-last` ranges; ascending, no repeats.
    package static func parseList(_ text: String) throws(InvalidList) -> [Int] {
        var cpus: Set<Int> = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let bounds = part.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let first = bounds.first ?? nil, let last = bounds.last ?? nil, first >= 0, last >= first, last < 4_096 else {
                throw InvalidList(description: "CPU list \"\(text)\": \"\(part)\" is neither a CPU number nor a range first-last")
            }
            cpus.formUnion(first...last)
        }
        return cpus.sorted()
    }

    /// A list as `taskset -c` takes it.
    package static func listText(_ cpus: [Int]) -> String {
        cpus.map(String.init).joined(separator: ",")
    }

    /// The CPUs a process (or, with `task`, one of its threads) may run on, from the
    /// `Cpus_allowed_list` line of its `/proc` status; nil when that cannot be read.
    package static func allowedCPUs(of pid: String = "self", task: String? = nil) -> [Int]? {
        let path = task.map { "/proc/\(pid)/task/\($0)/status" } ?? "/proc/\(pid)/status"
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") })
        else { return nil }
        return try? parseList(line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces))
    }

    /// How many threads of CPU work this process can run at once: `cores` (what swift-nio's
    /// `System.coreCount` reads from cgroup quotas and cpusets) capped by the CPUs its affinity mask
    /// allows, which `taskset` and `numactl` set and cgroups do not show.
    package static func usableCores(_ cores: Int) -> Int {
        guard let allowed = allowedCPUs(), !allowed.isEmpty else { return cores }
        return max(1, min(cores, allowed.count))
    }
}
