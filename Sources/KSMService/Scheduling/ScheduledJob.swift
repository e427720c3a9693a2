import Kafka
import Wire

/// A consumed message waiting for a batch, decoded once when it arrives so the scheduler can order
/// it by class, tenant and deadline (and so the processor does not decode it again).
///
/// The message and the decoded job live in one shared box: the scheduler's heaps move jobs around
/// on every push and pop, and a moved value should be a pointer and a few integers, not two byte
/// arrays and a dozen strings to retain and release.
struct ScheduledJob: Sendable {
    private final class Box: Sendable {
        let message: KafkaMessage
        let decoded: Result<LicenseJob, LicenseJobError>

        init(message: KafkaMessage, decoded: Result<LicenseJob, LicenseJobError>) {
            self.message = message
            self.decoded = decoded
        }
    }

    private let box: Box
    /// Arrival order; ties between equal deadlines go to the older job.
    let sequence: UInt64
    /// When the answer stops being useful (ms since 1970); nil means no deadline.
    let deadline: Int64?
    /// The class topic's class, else the job's `priority` field; an undecodable job off the requests
    /// topic is scheduled as a new session: it costs nothing and must not wait long.
    let priority: LicenseJob.Priority
    /// Set when the scheduler sheds the job under overload: answered `overloaded` with this hint.
    var retryAfterMilliseconds: Int64?
    /// When the worker received the message, for the received -> delivered latency metric.
    let arrived: ContinuousClock.Instant
    /// True when no earlier owner of the partition can have answered this message: its offset is at
    /// or past the log end the partition had when this worker was assigned it. Its admission skips the
    /// stored-reply lookup (``AdmissionRequest/mayHaveStoredReply``).
    let firstDelivery: Bool
    /// The value is larger than the worker's maximum request size: refused before any decoding.
    let isOversize: Bool

    /// - Parameter maximumBytes: a longer value is not decoded at all: it fails with
    ///   ``isOversize`` set, and the worker dead-letters it without asking the processor.
    /// - Parameter topicClass: the class of the class topic the message came from (``RequestTopics``):
    ///   it wins over the job's `priority` field; nil for the requests topic.
    init(
        message: KafkaMessage, sequence: UInt64, firstDelivery: Bool = false, maximumBytes: Int = LicenseJob.maximumEncodedSize,
        topicClass: LicenseJob.Priority? = nil
    ) {
        let decoded: Result<LicenseJob, LicenseJobError>
        if message.value.count > maximumBytes {
            decoded = .failure(LicenseJobError(field: nil, "request of \(message.value.count) bytes exceeds the worker's \(maximumBytes)-byte maximum"))
            isOversize = true
        } else {
            isOversize = false
            do throws(LicenseJobError) {
                decoded = .success(try LicenseJob(json: message.value))
            } catch {
                decoded = .failure(error)
            }
        }
        box = Box(message: message, decoded: decoded)
        self.sequence = sequence
        self.firstDelivery = firstDelivery
        arrived = .now
        switch decoded {
        case .success(let job):
            deadline = job.deadline
            priority = topicClass ?? job.priority
        case .failure:
            deadline = nil
            priority = topicClass ?? .new
        }
    }

    var message: KafkaMessage { box.message }

    /// The job, or why the bytes are not one (answered `invalidJob` or dead-lettered in its batch).
    var decoded: Result<LicenseJob, LicenseJobError> { box.decoded }

    /// The tenant fairness applies to, by its bytes (as the store tells tenants apart); undecodable
    /// jobs share one pseudo-tenant.
    var tenant: ByteKey {
        switch box.decoded {
        case .success(let job): ByteKey(job.tenant.value)
        case .failure(let error): ByteKey(error.tenant ?? "")
        }
    }

    /// Earliest deadline first; no deadline sorts last; arrival order breaks ties, so jobs of equal
    /// deadlines (no deadline included) leave in the order they came.
    struct QueueOrder: Comparable, Sendable {
        let deadline: Int64
        let sequence: UInt64

        static func < (a: QueueOrder, b: QueueOrder) -> Bool {
            a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
        }
    }

    var queueOrder: QueueOrder { QueueOrder(deadline: deadline ?? .max, sequence: sequence) }
}
