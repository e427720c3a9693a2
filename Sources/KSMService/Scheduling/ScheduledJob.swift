import Kafka

/// A consumed message waiting for a batch, decoded once when it arrives so the scheduler can order
/// it by class, tenant and deadline (and so the processor does not decode it again).
struct ScheduledJob: Sendable {
    let message: KafkaMessage
    /// The job, or why the bytes are not one (answered `invalidJob` or dead-lettered in its batch).
    let decoded: Result<LicenseJob, LicenseJobError>
    /// Arrival order; ties between equal deadlines go to the older job.
    let sequence: UInt64
    /// Set when the scheduler sheds the job under overload: answered `overloaded` with this hint.
    var retryAfterMilliseconds: Int64?

    init(message: KafkaMessage, sequence: UInt64) {
        self.message = message
        self.sequence = sequence
        do throws(LicenseJobError) {
            decoded = .success(try LicenseJob(json: message.value))
        } catch {
            decoded = .failure(error)
        }
    }

    /// An undecodable job is scheduled as a new session: it costs nothing and must not wait long.
    var priority: LicenseJob.Priority {
        if case .success(let job) = decoded { return job.priority }
        return .new
    }

    var deadline: Int64? {
        if case .success(let job) = decoded { return job.deadline }
        return nil
    }

    /// The tenant fairness applies to; undecodable jobs share one pseudo-tenant.
    var tenant: String {
        switch decoded {
        case .success(let job): job.tenant.value
        case .failure(let error): error.tenant ?? ""
        }
    }

    /// Earliest deadline first; no deadline sorts last; arrival order breaks ties.
    static func precedes(_ a: ScheduledJob, _ b: ScheduledJob) -> Bool {
        let da = a.deadline ?? .max, db = b.deadline ?? .max
        return da != db ? da < db : a.sequence < b.sequence
    }
}
