import KSMService

/// Why a load run could not start. `description` is a sentence for the person at the terminal.
package enum LoadGeneratorError: Error, Sendable, CustomStringConvertible {
    /// No metadata for the requests topic within the connect timeout: the brokers are down or
    /// unreachable, or the topic does not exist.
    case brokersUnreachable(brokers: String, topic: String, waited: Duration, reason: String)

    package var description: String {
        switch self {
        case .brokersUnreachable(let brokers, let topic, let waited, let reason):
            "cannot reach Kafka at \(brokers): no metadata for topic \(topic) within \(waited.components.seconds) s (\(reason)); check --brokers and that the topic exists"
        }
    }
}
