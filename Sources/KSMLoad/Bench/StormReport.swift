import FairPlayDevice
import Foundation
import KSMService

/// What one storm run measured: correctness of every answer, drain time, latency per priority class,
/// and a timeline (for the chart) in 250 ms buckets.
package struct StormReport: Codable, Sendable {
    package struct Bucket: Codable, Sendable {
        /// Seconds since the storm started (bucket start).
        package var t: Double
        /// Jobs sent but not finally answered at the end of the bucket.
        package var queued: Int
        /// Final answers per second during the bucket.
        package var repliesPerSecond: Double
        /// p99 latency (ms) of the continuity and new answers that arrived in the bucket; nil if none.
        package var continuityP99: Double?
        package var newP99: Double?

        enum CodingKeys: String, CodingKey {
            case t, queued
            case repliesPerSecond = "replies_per_second"
            case continuityP99 = "continuity_p99_ms"
            case newP99 = "new_p99_ms"
        }
    }

    package var label: String
    package var jobs: Int
    package var correct: Int
    package var wrong: Int
    package var missing: Int
    /// Jobs that got more than one final answer (the client keeps the first).
    package var duplicates: Int
    /// Retriable replies (overloaded, storeUnavailable) that made the client send again.
    package var retriableReplies: Int
    package var drainSeconds: Double
    /// When the last continuity and the last new-session job were answered, seconds after the storm
    /// started (nil in figures saved before they existed).
    package var continuityDrainSeconds: Double?
    package var newDrainSeconds: Double?
    /// Whether the client sent each class to its own topic (the workers read class topics).
    package var classTopics: Bool?
    package var continuityLatency: LoadReport.Latency
    package var newLatency: LoadReport.Latency
    package var timeline: [Bucket]
    /// CPU microseconds per job during the storm, by component (``CPUAccount``): the workers, this
    /// process's crypto pool, Swift threads and librdkafka threads (client and mock broker), and
    /// redis-server. `workers/crypto`, `workers/swift` and `workers/kafka-client` split `workers` by
    /// thread and are not part of `total` (sum the components without them). Nil in figures saved
    /// before it existed.
    package var cpuMicrosecondsPerJob: [String: Double]?
    /// CPU time over the cores' time during the storm: below 1, cores were idle or taken by the host.
    package var cpuUtilization: Double?
    /// The share of the CPUs' time the hypervisor took during the storm (``HostTime``).
    package var hostSteal: Double?
    /// The most final answers within any one second of the storm (a sliding second over the answers).
    package var peakRepliesPerSecond: Double?
    /// The rotating viewers asked at their advertised `next-key.fetch-at` (priority prefetch).
    package var followedWindow: Bool?
    /// Rotating viewers whose current-key reply carried no `next-key` (a window run; they asked at the window's start).
    package var unadvisedViewers: Int?
    /// When the next key period started, seconds after the storm started (for an unsmoothed storm:
    /// the end of its one-second send window).
    package var boundarySeconds: Double?
    /// Rotating viewers (continuity or prefetch) answered after their key period started, or never.
    package var rotatingAnsweredAfterBoundary: Int?
    /// The least time between a rotating viewer's answer and the boundary, in ms (negative: late).
    package var rotatingMinimumSlackMilliseconds: Double?

    enum CodingKeys: String, CodingKey {
        case label, jobs, correct, wrong, missing, duplicates, timeline
        case retriableReplies = "retriable_replies"
        case drainSeconds = "drain_seconds"
        case continuityDrainSeconds = "continuity_drain_seconds"
        case newDrainSeconds = "new_drain_seconds"
        case classTopics = "class_topics"
        case continuityLatency = "continuity_latency_ms"
        case newLatency = "new_latency_ms"
        case cpuMicrosecondsPerJob = "cpu_us_per_job"
        case cpuUtilization = "cpu_utilization"
        case hostSteal = "host_steal"
        case peakRepliesPerSecond = "peak_replies_per_second"
        case followedWindow = "followed_window"
        case unadvisedViewers = "unadvised_viewers"
        case boundarySeconds = "boundary_seconds"
        case rotatingAnsweredAfterBoundary = "rotating_answered_after_boundary"
        case rotatingMinimumSlackMilliseconds = "rotating_minimum_slack_ms"
    }

    /// The most of `times` (seconds, any order) that fall within any one second.
    static func peakPerSecond(_ times: [Double]) -> Double {
        let sorted = times.sorted()
        var best = 0
        var low = 0
        for high in sorted.indices {
            while sorted[high] - sorted[low] >= 1 { low += 1 }
            best = max(best, high - low + 1)
        }
        return Double(best)
    }

    /// Records, for every rotating viewer, whether its answer arrived before `boundary` (when its key
    /// period started).
    mutating func recordBoundary(
        _ boundary: ContinuousClock.Instant, start: ContinuousClock.Instant, prepared: [StormBenchmark.Prepared],
        state: StormBenchmark.Tracker.State
    ) {
        boundarySeconds = ((boundary - start).seconds * 1000).rounded() / 1000
        var late = 0
        var slack = Double.infinity
        for (index, job) in state.jobs.enumerated() where prepared[index].priority == .continuity {
            guard let at = job.answeredAt else {
                late += 1
                continue
            }
            let margin = (boundary - at).seconds * 1000
            if margin < 0 { late += 1 }
            slack = min(slack, margin)
        }
        rotatingAnsweredAfterBoundary = late
        rotatingMinimumSlackMilliseconds = slack.isFinite ? slack.rounded() : nil
    }

    package var allCorrect: Bool { correct == jobs && wrong == 0 && missing == 0 }

    init(
        label: String, start: ContinuousClock.Instant, end: ContinuousClock.Instant, prepared: [StormBenchmark.Prepared],
        catalog: DemoCatalog, state: StormBenchmark.Tracker.State
    ) {
        self.label = label
        jobs = prepared.count
        var correct = 0
        var wrong = 0
        var missing = 0
        var duplicates = 0
        var continuity: [Double] = []
        var fresh: [Double] = []
        var last = start
        var lastContinuity = start
        var lastNew = start
        var answers: [(at: Double, latency: Double, continuity: Bool)] = []
        var sends: [Double] = []
        for (index, job) in state.jobs.enumerated() {
            if let sent = job.firstSent { sends.append((sent - start).seconds) }
            guard let bytes = job.answer, let at = job.answeredAt, let sent = job.firstSent else {
                missing += 1
                continue
            }
            if job.finalReplies > 1 { duplicates += 1 }
            let p = prepared[index]
            if let reply = try? LicenseReply(json: bytes), reply.status == .ok, let ckc = reply.ckc,
                let opened = try? CKCOpener.open(ckc, session: p.session), opened.contentKey == catalog.contentKey(assetID: p.asset)
            {
                correct += 1
            } else {
                wrong += 1
            }
            let latency = (at - sent).seconds * 1000
            if p.priority == .continuity { continuity.append(latency) } else { fresh.append(latency) }
            answers.append(((at - start).seconds, latency, p.priority == .continuity))
            last = max(last, at)
            if p.priority == .continuity { lastContinuity = max(lastContinuity, at) } else { lastNew = max(lastNew, at) }
        }
        self.correct = correct
        self.wrong = wrong
        self.missing = missing
        self.duplicates = duplicates
        retriableReplies = state.retriable
        drainSeconds = ((last - start).seconds * 1000).rounded() / 1000
        continuityDrainSeconds = ((lastContinuity - start).seconds * 1000).rounded() / 1000
        newDrainSeconds = ((lastNew - start).seconds * 1000).rounded() / 1000
        peakRepliesPerSecond = Self.peakPerSecond(answers.map(\.at))
        continuityLatency = .init(milliseconds: continuity)
        newLatency = .init(milliseconds: fresh)

        let width = 0.25
        let span = max((end - start).seconds, drainSeconds)
        let count = Int((span / width).rounded(.up)) + 1
        var sentBy = Array(repeating: 0, count: count)
        var answeredBy = Array(repeating: 0, count: count)
        var continuityBy = Array(repeating: [Double](), count: count)
        var newBy = Array(repeating: [Double](), count: count)
        for t in sends { sentBy[min(count - 1, Int(t / width))] += 1 }
        for answer in answers {
            let b = min(count - 1, Int(answer.at / width))
            answeredBy[b] += 1
            if answer.continuity { continuityBy[b].append(answer.latency) } else { newBy[b].append(answer.latency) }
        }
        var queued = 0
        timeline = (0..<count).map { b in
            queued += sentBy[b] - answeredBy[b]
            return Bucket(
                t: Double(b) * width, queued: queued, repliesPerSecond: Double(answeredBy[b]) / width,
                continuityP99: continuityBy[b].isEmpty ? nil : LoadReport.Latency(milliseconds: continuityBy[b]).p99,
                newP99: newBy[b].isEmpty ? nil : LoadReport.Latency(milliseconds: newBy[b]).p99)
        }
    }
}
