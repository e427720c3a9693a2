import Foundation
import KSMService
import OwnedThreads

/// CPU time of the CPUs this process may use, from `/proc/stat`, to tell how busy they were before a
/// storm and how much of a phase the hypervisor took (steal): on a shared VM a benchmark's seconds
/// are not all its own, and a ratio of two phases moves with how much each one lost. Only this
/// process's CPUs count: for a process confined to some CPUs of a large host (a cpuset, `taskset`),
/// the host's other CPUs say nothing about the storm's. Elsewhere than Linux every reading is zero.
package struct HostTime: Sendable, Equatable {
    /// Clock ticks summed over the CPUs: everything (user through steal) and steal alone.
    package var total: Double
    package var steal: Double
    /// Idle and iowait ticks: the time no process wanted a CPU.
    package var idle: Double

    package init(total: Double = 0, steal: Double = 0, idle: Double = 0) {
        self.total = total
        self.steal = steal
        self.idle = idle
    }

    /// Now, summed over the `cpuN` lines of ``cpus``: user nice system idle iowait irq softirq steal.
    package static func sample() -> HostTime {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return HostTime() }
        var sum = HostTime()
        for line in text.split(separator: "\n") where line.hasPrefix("cpu") {
            let fields = line.split(separator: " ")
            guard let cpu = Int(fields[0].dropFirst(3)), cpus?.contains(cpu) ?? true else { continue }
            let ticks = fields.dropFirst().prefix(8).compactMap { Double($0) }
            guard ticks.count == 8 else { continue }
            sum.total += ticks.reduce(0, +)
            sum.steal += ticks[7]
            sum.idle += ticks[3] + ticks[4]
        }
        return sum
    }

    /// The CPUs this process could use when first sampled (`Cpus_allowed_list`; nil: every CPU).
    /// Read once: a pinned storm bench later moves its own threads to the harness's CPUs, and its
    /// figures still cover the workers' CPUs too.
    static let cpus: Set<Int>? = CPUAffinity.allowedCPUs().map(Set.init)

    /// The share of the CPUs' time that was not idle between `before` and `self` (processes,
    /// interrupts and steal), rounded to a thousandth; nil when nothing was read.
    package func busyFraction(since before: HostTime) -> Double? {
        let total = self.total - before.total
        guard total > 0 else { return nil }
        return ((total - (idle - before.idle)) / total * 1000).rounded() / 1000
    }

    /// The share of the CPUs' time the hypervisor took between `before` and `self`, rounded to a
    /// thousandth; nil when nothing was read.
    package func stealFraction(since before: HostTime) -> Double? {
        let total = self.total - before.total
        guard total > 0 else { return nil }
        return ((steal - before.steal) / total * 1000).rounded() / 1000
    }
}
