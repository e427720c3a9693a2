import Kafka
import Licensing
import Tracing

/// Where each answer goes and the record that carries it: the one place a reply record is made, so
/// nothing is ever written to a topic outside the allowlist (``ReplyTopicPolicy``).
struct ReplyRouting: Sendable {
    /// Always allowed; where every answer goes unless its job names an allowed `reply-topic`.
    let repliesTopic: String
    let deadLetterTopic: String
    let policy: ReplyTopicPolicy
    let deadLetterLimits: DeadLetterRecord.Limits

    init(configuration: WorkerConfiguration) {
        repliesTopic = configuration.repliesTopic
        deadLetterTopic = configuration.deadLetterTopic
        policy = configuration.replyTopicPolicy
        deadLetterLimits = configuration.deadLetterLimits
    }

    /// The record to publish for one message: the reply on the reply topic (the job's `reply-topic`
    /// header wins when allowed), or the original bytes on the dead-letter topic. A reply carries the
    /// job's trace context (``JobTracing``).
    func record(_ outcome: JobOutcome, for message: KafkaMessage, span: (any Span)? = nil) -> KafkaProducer.Record {
        switch outcome {
        case .reply(let reply):
            // A topic outside the allowlist is never written: the answer goes to the replies topic (a
            // job naming one was refused before any work; this holds for every other answer too).
            let tenant = reply.tenant.flatMap { try? StoreIdentifier($0) }
            let named = Self.replyTopicHeader(of: message)
            let topic = named.flatMap { isAllowed($0, tenant: tenant) ? $0 : nil } ?? repliesTopic
            var headers: [(String, [UInt8])] =
                [
                    ("correlation-id", message.header("correlation-id") ?? Array(reply.id.utf8)),
                    ("ksm-status", Array(String(reply.status.rawValue).utf8)),
                ] + JobTracing.replyHeaders(for: message, span: span)
            // The same bytes as the first answer (a redelivered job): marked, so the edge may drop it.
            if reply.isDuplicate { headers.append(("ksm-duplicate", Array("1".utf8))) }
            return KafkaProducer.Record(topic: topic, key: message.key, value: reply.jsonBytes(), headers: headers)
        case .deadLetter(let reason):
            return DeadLetterRecord.make(for: message, reason: reason, topic: deadLetterTopic, limits: deadLetterLimits)
        case .deadLetterHeadersOnly(let reason, let jobID):
            return DeadLetterRecord.headersOnly(for: message, reason: reason, jobID: jobID, topic: deadLetterTopic)
        }
    }

    /// The `reply-topic` header as text; a header that is not UTF-8 names no topic Kafka could hold,
    /// so it is kept as a name no pattern matches rather than decoded lossily into one that might.
    static func replyTopicHeader(of message: KafkaMessage) -> String? {
        guard let bytes = message.header("reply-topic") else { return nil }
        return String(validating: bytes, as: UTF8.self) ?? "\u{0}"
    }

    /// The replies topic, or a topic ``policy`` allows for `tenant`.
    func isAllowed(_ topic: String, tenant: StoreIdentifier?) -> Bool {
        topic.utf8.elementsEqual(repliesTopic.utf8) || policy.allows(topic, tenant: tenant)
    }

    /// The refusal for a job whose `reply-topic` header names a topic its tenant may not use; nil
    /// when the destination is allowed.
    func refusal(for job: LicenseJob, message: KafkaMessage) -> LicenseReply? {
        guard let named = Self.replyTopicHeader(of: message), !isAllowed(named, tenant: job.tenant) else { return nil }
        let shown = ReplyTopicPolicy.isValidTopicName(named) ? "topic \(named)" : "a name that is no Kafka topic"
        return LicenseReply(
            id: job.id.value, status: .replyTopicRefused,
            reason:
                "the job's reply-topic header names \(shown), which tenant \(job.tenant) may not receive answers on (reply-topics); not processed, answered on \(repliesTopic)",
            tenant: job.tenant.value, account: job.account.value, rule: "reply-topic:not-allowed")
    }
}
