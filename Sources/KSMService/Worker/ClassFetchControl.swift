import Kafka

/// Decides which request topics a worker fetches, so room in memory goes to the higher class first.
///
/// The in-flight limit (jobs received and not yet answered) used to pause every partition at once;
/// a continuity request behind a join storm in the same partition then waited for the whole storm.
/// With class topics each class pauses on its own thresholds (M is the in-flight limit):
///
/// | fetch class | pauses when | resumes when |
/// | --- | --- | --- |
/// | continuity, requests topic | in flight >= M | in flight <= M/2 |
/// | new | in flight >= M, or >= M/2 with `newReserve` new jobs queued | in flight <= M/4, or queued new <= `newReserve`/2 and in flight <= M - `newReserve` |
/// | prefetch | in flight >= M, or `prefetchReserve` queued and (continuity + new queued >= `busy`, or in flight >= M/4) | in flight <= M/8 and continuity + new queued < `busy`/2, or queued prefetch <= `prefetchReserve`/2 and in flight <= M - `newReserve` |
///
/// Continuity therefore always has the upper half of the room to itself, and new sessions and
/// prefetch keep a reserve in memory even then: the floor the scheduler's batch shares serve from
/// (``SchedulingPolicy/newSessionShare``), so no class starves. Thresholds are hysteretic because a
/// resumed partition takes up to a second to deliver again (librdkafka 2.0.2).
///
/// Deciding and recording are apart: ``update(inFlight:queued:classes:)`` decides and returns every
/// switch librdkafka does not have yet; the worker makes them (``apply(_:to:topics:)``) and reports
/// what librdkafka did (``record(_:)``), and only that moves ``paused``. A switch the consumer failed
/// to make is returned again by the next update, until librdkafka takes it: a resume dropped once
/// would otherwise leave its class paused until the next rebalance.
struct ClassFetchControl: Sendable {
    /// What pauses together: the partitions of one class topic, or of the requests topic.
    enum FetchClass: Hashable, Sendable, CustomStringConvertible {
        /// The requests topic: jobs of every class, ordered in memory by their `priority` field.
        case mixed
        case priority(LicenseJob.Priority)

        var description: String {
            switch self {
            case .mixed: "requests"
            case .priority(let priority): priority.rawValue
            }
        }
    }

    /// Pauses and resumes to make, by fetch class.
    struct Change: Sendable, Equatable {
        var pause: Set<FetchClass> = []
        var resume: Set<FetchClass> = []
        var isEmpty: Bool { pause.isEmpty && resume.isEmpty }
    }

    /// Which way a class is switched.
    enum Action: String, Sendable, Hashable {
        case pause, resume
    }

    /// Why librdkafka did not switch a class: the call failed, or it refused one of its partitions.
    struct Failure: Sendable {
        var action: Action
        var error: KafkaError
    }

    /// What the consumer did with a ``Change``, per class.
    struct Outcome: Sendable {
        /// Classes switched on every assigned partition (none assigned counts: none is left fetching
        /// or paused), and which way.
        var switched: [FetchClass: Action] = [:]
        /// Classes not switched, with why; they stay where they were.
        var failed: [FetchClass: Failure] = [:]

        /// Every class of `change` switched: what a consumer that took every call reports.
        static func succeeded(_ change: Change) -> Outcome {
            var outcome = Outcome()
            for fetchClass in change.pause { outcome.switched[fetchClass] = .pause }
            for fetchClass in change.resume { outcome.switched[fetchClass] = .resume }
            return outcome
        }
    }

    /// What ``record(_:)`` saw, for the log and the metrics.
    struct Report: Sendable {
        /// Classes not switched, with the failure and the failed attempts in a row so far.
        var failed: [FetchClass: (failure: Failure, attempts: Int)] = [:]
        /// Classes switched after this many failed attempts.
        var recovered: [FetchClass: Int] = [:]
    }

    let maximumInFlight: Int
    /// New-session jobs kept in memory for the floor while continuity holds the room.
    let newReserve: Int
    /// Prefetch jobs kept in memory for the floor (each is served or shed with a retry-after).
    let prefetchReserve: Int
    /// Continuity and new jobs queued at which prefetch has no spare capacity.
    let busy: Int
    /// Classes the thresholds want paused; the hysteresis decides from these.
    private(set) var decided: Set<FetchClass> = []
    /// Classes librdkafka paused on every assigned partition, as the worker reported (``record(_:)``):
    /// what the consumer really has. A class stays where it was until a switch of all its partitions
    /// succeeds, so a half-made resume keeps it here and is made again.
    private(set) var paused: Set<FetchClass> = []
    /// Failed attempts in a row, per class whose switch is still to make.
    private(set) var failedAttempts: [FetchClass: Int] = [:]

    /// Classes decided one way and recorded the other: every update returns their switch again.
    var pending: Set<FetchClass> { decided.symmetricDifference(paused) }

    /// - Parameter round: jobs the worker takes at once (batch size x concurrent batches).
    init(maximumInFlight: Int, round: Int) {
        let limit = max(maximumInFlight, 1)
        self.maximumInFlight = limit
        busy = max(round, 1)
        newReserve = max(1, min(4 * max(round, 1), limit / 4))
        prefetchReserve = max(1, min(max(round, 1) / 4, limit / 8))
    }

    /// Re-decides every class from the worker's load; returns every switch librdkafka does not have
    /// yet: the ones just decided and those that failed before. Records nothing as made: report what
    /// the consumer did with ``record(_:)``.
    mutating func update(
        inFlight: Int, queued: [LicenseJob.Priority: Int],
        classes: [FetchClass] = [.mixed, .priority(.continuity), .priority(.new), .priority(.prefetch)]
    ) -> Change {
        for fetchClass in classes {
            let isPaused = decided.contains(fetchClass)
            if isPaused, shouldResume(fetchClass, inFlight: inFlight, queued: queued) {
                decided.remove(fetchClass)
            } else if !isPaused, shouldPause(fetchClass, inFlight: inFlight, queued: queued) {
                decided.insert(fetchClass)
            }
        }
        // A class decided back to where librdkafka has it needs no switch, and its failures are moot.
        let pending = self.pending
        failedAttempts = failedAttempts.filter { pending.contains($0.key) }
        var change = Change()
        for fetchClass in classes where pending.contains(fetchClass) {
            if decided.contains(fetchClass) {
                change.pause.insert(fetchClass)
            } else {
                change.resume.insert(fetchClass)
            }
        }
        return change
    }

    /// Records what the consumer did with a change: a class it switched moves, a class it failed to
    /// switch stays where it was (and its switch is returned by the next update). Returns the
    /// failures with their attempts in a row, and the classes switched after failing, for the log.
    @discardableResult
    mutating func record(_ outcome: Outcome) -> Report {
        var report = Report()
        for (fetchClass, switched) in outcome.switched {
            if switched == .pause { paused.insert(fetchClass) } else { paused.remove(fetchClass) }
            if let attempts = failedAttempts.removeValue(forKey: fetchClass) { report.recovered[fetchClass] = attempts }
        }
        for (fetchClass, failure) in outcome.failed {
            failedAttempts[fetchClass, default: 0] += 1
            report.failed[fetchClass] = (failure, failedAttempts[fetchClass, default: 1])
        }
        return report
    }

    /// Partitions of `classes` were assigned. librdkafka fetches a new partition until it is told
    /// otherwise, so a class decided paused is recorded as not paused any more and the next update
    /// pauses all its partitions again (pausing one already paused changes nothing). A class whose
    /// resume is still to make keeps it: its old partitions may still be paused.
    mutating func partitionsAssigned(of classes: Set<FetchClass>) {
        paused.subtract(classes.intersection(decided))
    }

    private func shouldPause(_ fetchClass: FetchClass, inFlight: Int, queued: [LicenseJob.Priority: Int]) -> Bool {
        let m = maximumInFlight
        if inFlight >= m { return true }
        switch fetchClass {
        case .mixed, .priority(.continuity):
            return false
        case .priority(.new):
            return inFlight >= m / 2 && queued[.new, default: 0] >= newReserve
        default:
            let higher = queued[.continuity, default: 0] + queued[.new, default: 0]
            return queued[.prefetch, default: 0] >= prefetchReserve && (higher >= busy || inFlight >= m / 4)
        }
    }

    private func shouldResume(_ fetchClass: FetchClass, inFlight: Int, queued: [LicenseJob.Priority: Int]) -> Bool {
        let m = maximumInFlight
        switch fetchClass {
        case .mixed, .priority(.continuity):
            return inFlight <= m / 2
        case .priority(.new):
            return inFlight <= m / 4 || (queued[.new, default: 0] <= newReserve / 2 && inFlight <= m - newReserve)
        default:
            let higher = queued[.continuity, default: 0] + queued[.new, default: 0]
            return (inFlight <= m / 8 && higher < busy / 2)
                || (queued[.prefetch, default: 0] <= prefetchReserve / 2 && inFlight <= m - newReserve)
        }
    }
}
