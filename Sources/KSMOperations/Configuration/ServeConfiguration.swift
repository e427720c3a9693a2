import FairPlay
import KSMService
import Licensing
import Logging
import RedisStore

/// `ksm serve`'s resolved settings, typed and checked: what the worker runs with.
///
/// ``resolve(flags:environment:configFile:defaultInstanceID:)`` layers flags over environment
/// variables over the JSON config file (swift-configuration's provider order) and refuses every
/// mistake it finds with a ``ServeConfigurationError`` naming each one.
public struct ServeConfiguration: Sendable {
    public var worker: WorkerConfiguration
    public var redisURL: String
    /// Replicas that must acknowledge every lease batch (`WAIT`), and for how long it may wait;
    /// nil (`redis-wait-replicas` 0, the default): Redis's asynchronous replication (docs/redis.md).
    public var redisDurability: RedisDurability?
    public var credentials: String
    public var fpscryptoLibrary: String?
    public var fpscryptoGeneration: FPSCryptoLibrary.Generation = .default
    /// Key-encryption key ID to file path (`kek`, `KSM_KEK_FILES`, `--kek`).
    public var keyEncryptionKeyFiles: [String: String] = [:]
    public var cryptoThreads: Int
    public var protocolVersions: [UInt32] = []
    public var logLevel: Logger.Level = .info
    public var logFormat: LogFormat = .text
    public var slotCountInterval: Duration = .seconds(15)
    /// Nil: no admin server.
    public var adminPort: Int?
    /// Zero: no cache.
    public var cacheTTL: Duration = .seconds(2)
    /// Nil: no rotation prefetch.
    public var rotation: RotationPrefetchConfiguration? = RotationPrefetchConfiguration()
    /// The window advertised in successful replies on rotating streams (`next-key`); needs the
    /// rotation prefetcher (cache on, `rotation-lead` above 0), whose passes read the schedules.
    package var prefetchWindow = PrefetchWindow()
    public var guardsEnabled = true
    public var replyTTLMilliseconds: Int64 = 15 * 60 * 1000
    public var rateWindowMilliseconds: Int64 = 1000
    /// Nil: spans are not exported (no endpoint, or tracing off).
    public var otlp: OTLPTracingConfiguration?
    /// An endpoint was configured without `--tracing`: worth a warning.
    public var otlpWithoutTracing = false
    /// Each setting as resolved, its value already redacted, for `--check-config`.
    public var report: [ResolvedSetting] = []

    public init(worker: WorkerConfiguration, redisURL: String, credentials: String, cryptoThreads: Int) {
        self.worker = worker
        self.redisURL = redisURL
        self.credentials = credentials
        self.cryptoThreads = cryptoThreads
    }

    /// One line of `--check-config`: a key, its value (secrets redacted) and where it came from.
    public struct ResolvedSetting: Sendable, Equatable {
        public var key: String
        public var value: String
        /// `--flag`, `ENV_NAME`, `config file` or `default`.
        public var source: String
    }

    /// The settings as `--check-config` prints them: one `key = value  (source)` line each.
    public var summary: String {
        let width = report.map(\.key.count).max() ?? 0
        return report.map { line in
            line.key.padding(toLength: width, withPad: " ", startingAt: 0) + " = " + line.value + "  (" + line.source + ")"
        }.joined(separator: "\n")
    }

    /// Resolves flags over the environment over the config file.
    ///
    /// - Parameters:
    ///   - flags: Values given on the command line, by config-file key (``ServeSetting/key``); map
    ///     settings as `.stringArray` of `KEY=VALUE`.
    ///   - configFile: The JSON config file's path; nil uses `KSM_CONFIG` if set, else no file.
    ///   - defaultInstanceID: The OTLP service instance when no `instance-id` is set.
    public static func resolve(
        flags: [String: ConfigFlagValue], environment: [String: String], configFile: String? = nil,
        defaultInstanceID: String = "ksm"
    ) throws(ServeConfigurationError) -> ServeConfiguration {
        var resolver = ServeConfigurationResolver(
            flags: flags, environment: environment,
            configFile: configFile ?? environment[ServeSetting.configFileEnvironment])
        let configuration = resolver.resolve(defaultInstanceID: defaultInstanceID)
        guard let configuration, resolver.problems.isEmpty else {
            throw ServeConfigurationError(problems: resolver.problems)
        }
        return configuration
    }
}

/// A value from the command line, before it is checked.
public enum ConfigFlagValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    /// Repeatable flags: `--kek ID=PATH`, `--kafka-property K=V`, `--tenant-weight T=W`, `--protocol-versions`.
    case list([String])
}
