import KSMService

extension ServeSetting {
    /// Every setting, in the order `--help` lists them and `--check-config` prints them.
    package static let all: [ServeSetting] = [
        .brokers, .group, .requestsTopic, .classTopics, .repliesTopic, .dlqTopic, .replyTopics, .instanceID,
        .kafkaProperties, .kafkaPropertyFiles,
        .redisURL, .redisWaitReplicas, .redisWaitTimeout,
        .credentials, .fpscryptoLibrary, .fpscryptoGeneration, .kek,
        .maxBatchSize, .concurrentBatches, .maxInFlight, .cryptoThreads, .protocolVersions, .maxRequestBytes, .shutdownTimeout,
        .scheduling, .tenantWeights, .prefetchMaxWait, .newSessionMaxWait, .newSessionShare, .prefetchShare,
        .cacheTTL, .rotationLead, .rotationInterval, .prefetchWindow, .prefetchMargin,
        .guards, .replyTTL, .rateWindow,
        .adminPort, .tenantLabelLimit, .slotCountInterval, .logLevel, .logFormat,
        .tracing, .otlpEndpoint, .otlpHeaders, .otlpScheduleDelay, .otlpTimeout, .traceSampleRatio, .serviceName,
    ]

    /// Settings by config-file key.
    package static let byKey: [String: ServeSetting] = Dictionary(uniqueKeysWithValues: all.map { ($0.key, $0) })

    /// The config file itself: a flag and an environment variable, never a key of the file.
    package static let config = ServeSetting(
        "config", env: "KSM_CONFIG", .string(default: nil), default: "none", example: "/etc/ksm/ksm.json",
        help:
            "JSON config file with the same keys as the long flags (e.g. \"brokers\", \"redis-url\", \"kek\": {\"id\": \"path\"}); unknown keys are refused."
    )

    /// The environment variable naming the config file itself (`--config`).
    package static var configFileEnvironment: String { config.environment }
}
