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

    let maximumInFlight: Int
    /// New-session jobs kept in memory for the floor while continuity holds the room.
    let newReserve: Int
    /// Prefetch jobs kept in memory for the floor (each is served or shed with a retry-after).
    let prefetchReserve: Int
    /// Continuity and new jobs queued at which prefetch has no spare capacity.
    let busy: Int
    private(set) var paused: Set<FetchClass> = []

    /// - Parameter round: jobs the worker takes at once (batch size x concurrent batches).
    init(maximumInFlight: Int, round: Int) {
        let limit = max(maximumInFlight, 1)
        self.maximumInFlight = limit
        busy = max(round, 1)
        newReserve = max(1, min(4 * max(round, 1), limit / 4))
        prefetchReserve = max(1, min(max(round, 1) / 4, limit / 8))
    }

    /// Re-decides every class from the worker's load; returns what changed.
    mutating func update(inFlight: Int, queued: [LicenseJob.Priority: Int],
                         classes: [FetchClass] = [.mixed, .priority(.continuity), .priority(.new), .priority(.prefetch)]) -> Change {
        var change = Change()
        for fetchClass in classes {
            let isPaused = paused.contains(fetchClass)
            if isPaused, shouldResume(fetchClass, inFlight: inFlight, queued: queued) {
                paused.remove(fetchClass)
                change.resume.insert(fetchClass)
            } else if !isPaused, shouldPause(fetchClass, inFlight: inFlight, queued: queued) {
                paused.insert(fetchClass)
                change.pause.insert(fetchClass)
            }
        }
        return change
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
