import Kafka
import Tracing

/// One job's answer on its way out, with what the metrics and the trace need.
struct PendingReply: Sendable {
    var message: KafkaMessage
    var outcome: JobOutcome
    /// The job's priority class, the metrics' `priority` label.
    var priority: String
    /// When the worker received the message: the received -> delivered latency starts here.
    var arrived: ContinuousClock.Instant
    var span: (any Span)?
}
