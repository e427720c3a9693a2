import Foundation
import KSMService

/// The whole machine's CPU time from `/proc/stat`, to tell how much of a phase the hypervisor took
/// (steal): on a shared VM a benchmark's seconds are not all its own, and a ratio of two phases
/// moves with how much each one lost. Elsewhere than Linux every reading is zero.
package struct HostTime: Sendable, Equatable {
    /// Clock ticks summed over all CPUs: everything (user through steal) and steal alone.
    package var total: Double
    package var steal: Double
    /// Idle and iowait ticks: the time no process wanted a CPU.
    package var idle: Double

    package init(total: Double = 0, steal: Double = 0, idle: Double = 0) {
        self.total = total
        self.steal = steal
        self.idle = idle
    }

    /// Now, from the first (`cpu`) line: user nice system idle iowait irq softirq steal.
    package static func sample() -> HostTime {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
              let line = text.split(separator: "\n").first, line.hasPrefix("cpu ") else { return HostTime() }
        let fields = line.split(separator: " ").dropFirst().prefix(8).compactMap { Double($0) }
        guard fields.count == 8 else { return HostTime() }
        return HostTime(total: fields.reduce(0, +), steal: fields[7], idle: fields[3] + fields[4])
    }

    /// The share of the machine's time that was not idle between `before` and `self` (processes,
    /// interrupts and steal), rounded to a thousandth; nil when nothing was read.
    package func busyFraction(since before: HostTime) -> Double? {
        let total = self.total - before.total
        guard total > 0 else { return nil }
        return ((total - (idle - before.idle)) / total * 1000).rounded() / 1000
    }

    /// The share of the machine's time the hypervisor took between `before` and `self`, rounded to
    /// a thousandth; nil when nothing was read.
    package func stealFraction(since before: HostTime) -> Double? {
        let total = self.total - before.total
        guard total > 0 else { return nil }
        return ((steal - before.steal) / total * 1000).rounded() / 1000
    }
}
