import Foundation
import KSMService
import Logging
import RedisStore

/// `ksm edge`'s resolved settings: where it listens (and with which TLS certificate, if any), the
/// Kafka it produces jobs to and reads its replies from, how long a request may wait, how many may
/// wait at once, and its logs.
///
/// The settings `ksm serve` also has (`--brokers`, `--requests-topic`, `--class-topics`,
/// `--kafka-property`, `--redis-url`, `--log-level`, `--log-format`) mean the same here and are read
/// from the environment variables their ``ServeSetting`` declarations name, so a deployment gives
/// the workers and the edges one set of variables. Like ``SpekeConfiguration``: a typed struct
/// resolved from flags over the environment, not a second setting table.
package struct EdgeConfiguration: Sendable {
    /// The address to bind; `0.0.0.0` for every IPv4 interface, `::` for every interface.
    package var host: String
    package var port: Int
    /// `bootstrap.servers`, as for `ksm serve`.
    package var brokers: String
    /// The requests topic; with ``classTopics`` a job goes to `<requestsTopic>.<priority>`.
    package var requestsTopic: String
    /// Produce each job to its class's topic, as workers with `--class-topics` read them.
    package var classTopics: Bool
    /// librdkafka properties for the producer, the reply consumer and the topic check (security,
    /// SASL), as for `ksm serve`. Secret-bearing ones are shown redacted.
    package var kafkaProperties: [String: String]
    /// `redis://` or `redis-cluster://`; optional here: the request path does not read Redis (an
    /// admission that verifies tokens may). Secret: shown redacted.
    package var redisURL: String?
    package var logLevel: Logger.Level
    package var logFormat: LogFormat
    /// How long a request waits for its reply; sent as the job's `deadline` (now + this, epoch ms).
    package var deadline: Duration
    /// Requests waiting at once; the next is answered 503 at once.
    package var maximumInFlight: Int
    /// Names this instance's reply topic: `<replyTopicPrefix><instanceID>`.
    package var instanceID: String
    package var replyTopicPrefix: String
    /// Largest POST body read, in bytes; a larger one is answered 413 before it is parsed.
    package var maximumRequestBytes: Int
    /// The PEM files HTTPS is served with; nil for plain HTTP (TLS ends at an ingress).
    package var tls: TLSFiles?
    /// Tokens, key-encryption keys and the per-client rate limit (``EdgeAdmissionSettings``).
    package var admission = EdgeAdmissionSettings()

    /// This instance's reply topic.
    package var replyTopic: String { replyTopicPrefix + instanceID }

    /// The topic a job of `priority` is produced to.
    package func requestTopic(for priority: LicenseJob.Priority) -> String {
        classTopics ? RequestTopics.topic(for: priority, requestsTopic: requestsTopic) : requestsTopic
    }

    /// Default `--listen`.
    package static let defaultListen = "0.0.0.0:8080"
    /// Default `--deadline`: 5 s.
    package static let defaultDeadline: Duration = .seconds(5)
    /// Accepted `--deadline`, in seconds.
    package static let deadlineRange = 0.05...300.0
    /// Default `--max-in-flight`.
    package static let defaultMaximumInFlight = 4_096
    package static let inFlightRange = 1...1_000_000
    /// Default `--reply-topic-prefix`: inside the `fps.license.replies.*` family that workers allow
    /// by default (ReplyTopicPolicy), so no worker setting changes for an edge.
    package static let defaultReplyTopicPrefix = "fps.license.replies.edge."
    /// Default `--max-request-bytes`: 256 KiB (``LicenseHTTPRequest/maximumBodySize``), which holds
    /// the largest SPC (64 KiB) as base64 in any request shape with room to spare.
    package static let defaultMaximumRequestBytes = LicenseHTTPRequest.maximumBodySize
    /// Accepted `--max-request-bytes`: 1 KiB to 256 KiB. The job carries the decoded SPC, so any
    /// body the codec accepts makes a job under the workers' limit (``LicenseJob/maximumEncodedSize``).
    package static let requestBytesRange = 1_024...LicenseHTTPRequest.maximumBodySize

    /// The environment variables only `ksm edge` reads.
    package static let listenEnvironment = "KSM_EDGE_LISTEN"
    package static let deadlineEnvironment = "KSM_EDGE_DEADLINE"
    package static let maxInFlightEnvironment = "KSM_EDGE_MAX_IN_FLIGHT"
    package static let instanceIDEnvironment = "KSM_EDGE_INSTANCE_ID"
    package static let replyTopicPrefixEnvironment = "KSM_EDGE_REPLY_TOPIC_PREFIX"
    package static let maxRequestBytesEnvironment = "KSM_EDGE_MAX_REQUEST_BYTES"
    /// `--tls-certificate` / `KSM_EDGE_TLS_CERTIFICATE` and `--tls-private-key` / `KSM_EDGE_TLS_PRIVATE_KEY`.
    package static let tlsNames = TLSFiles.Names(environmentPrefix: "KSM_EDGE")

    package init(
        host: String, port: Int, brokers: String, requestsTopic: String = "fps.license.requests", classTopics: Bool = false,
        kafkaProperties: [String: String] = [:], redisURL: String? = nil, logLevel: Logger.Level = .info, logFormat: LogFormat = .text,
        deadline: Duration = defaultDeadline, maximumInFlight: Int = defaultMaximumInFlight, instanceID: String,
        replyTopicPrefix: String = defaultReplyTopicPrefix, maximumRequestBytes: Int = defaultMaximumRequestBytes, tls: TLSFiles? = nil
    ) {
        self.host = host
        self.port = port
        self.brokers = brokers
        self.requestsTopic = requestsTopic
        self.classTopics = classTopics
        self.kafkaProperties = kafkaProperties
        self.redisURL = redisURL
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.deadline = deadline
        self.maximumInFlight = maximumInFlight
        self.instanceID = instanceID
        self.replyTopicPrefix = replyTopicPrefix
        self.maximumRequestBytes = maximumRequestBytes
        self.tls = tls
    }

    /// The settings as `--check-config` prints them: the Redis password and every secret-bearing
    /// librdkafka property redacted as `ksm serve` redacts them (``Redaction``), TLS files by path.
    package var summary: String {
        let properties = kafkaProperties.sorted { $0.key < $1.key }.map { name, value in
            "\(name)=\(Redaction.isSecretKafkaProperty(name) ? Redaction.placeholder : value)"
        }.joined(separator: ", ")
        let seconds = Double(deadline.components.seconds) + Double(deadline.components.attoseconds) / 1e18
        return
            ([
                "listen             = \(host.contains(":") ? "[\(host)]" : host):\(port)",
                "brokers            = \(brokers)",
                "requests-topic     = \(requestsTopic)",
                "class-topics       = \(classTopics)",
                "kafka-property     = \(properties.isEmpty ? "(none)" : properties)",
                "redis-url          = \(redisURL.map(Redaction.redactedURL) ?? "(none)")",
                "log-level          = \(logLevel.rawValue)",
                "log-format         = \(logFormat.rawValue)",
                "deadline           = \(ServeSetting.NumberBounds.format(seconds)) s",
                "max-in-flight      = \(maximumInFlight)",
                "instance-id        = \(instanceID)",
                "reply-topic        = \(replyTopic)",
                "max-request-bytes  = \(maximumRequestBytes)",
            ] + TLSFiles.summary(tls, width: 19) + admission.summaryLines(redis: redisURL != nil)).joined(separator: "\n")
    }

    /// The TLS server configuration from ``tls``, the files read and checked; nil for plain HTTP.
    package func tlsConfiguration() throws(ConfigurationProblem) -> ServerTLS? {
        try tls?.serverConfiguration()
    }
}
