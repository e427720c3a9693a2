import Kafka

/// What to publish for one message: a reply, or the message on the dead-letter topic.
enum JobOutcome: Sendable {
    case reply(LicenseReply)
    /// The original message, bounded by ``WorkerConfiguration/deadLetterLimits``.
    case deadLetter(reason: String)
    /// What is left when a reply or a full dead letter was refused for good (``DeadLetterRecord/headersOnly``).
    case deadLetterHeadersOnly(reason: String, jobID: String?)

    /// What to publish instead after this outcome was refused with a non-retriable `error`; nil once
    /// there is nothing smaller to try.
    func fallback(after error: KafkaError) -> JobOutcome? {
        switch self {
        case .reply(let reply):
            return .deadLetterHeadersOnly(
                reason: "reply (status \(reply.status.rawValue)) not deliverable: \(error.code): \(error.message)",
                jobID: reply.id.isEmpty ? nil : reply.id)
        case .deadLetter(let reason):
            return .deadLetterHeadersOnly(reason: "\(reason); full dead letter refused: \(error.code)", jobID: nil)
        case .deadLetterHeadersOnly:
            return nil
        }
    }

    var isDeadLetter: Bool {
        if case .reply = self { return false }
        return true
    }
}
