import FairPlay
import KSMService
import Licensing
import Logging
import RedisStore

/// `ksm serve`'s resolved settings, typed and checked: what the worker runs with. Every duration is
/// a `Duration`; the defaults are the declarations' (``ServeSetting``), applied by the resolver.
///
/// ``resolve(flags:environment:configFile:defaultInstanceID:)`` layers flags over environment
/// variables over the JSON config file (swift-configuration's provider order) and refuses every
/// mistake it finds with a ``ServeConfigurationError`` naming each one.
package struct ServeConfiguration: Sendable {
    package var worker: WorkerConfiguration
    package var redisURL: String
    /// Replicas that must acknowledge every lease batch (`WAIT`), and for how long it may wait;
    /// nil (`redis-wait-replicas` 0): Redis's asynchronous replication (docs/redis.md).
    package var redisDurability: RedisDurability?
    package var credentials: String
    package var fpscryptoLibrary: String?
    package var fpscryptoGeneration: FPSCryptoLibrary.Generation = .default
    /// Key-encryption key ID to file path (`kek`, `KSM_KEK_FILES`, `--kek`).
    package var keyEncryptionKeyFiles: [String: String] = [:]
    package var cryptoThreads: Int
    /// Empty: any version, as Apple's SDK.
    package var protocolVersions: [UInt32] = []
    package var logLevel: Logger.Level = .info
    package var logFormat: LogFormat = .text
    /// Between counts of the lease slots in use, for `/metrics` (with an admin port).
    package var slotCountInterval: Duration = .zero
    /// Nil: no admin server.
    package var adminPort: Int?
    /// Zero: no cache.
    package var cacheTTL: Duration = .zero
    /// Nil: no rotation prefetch.
    package var rotation: RotationPrefetchConfiguration?
    /// The window advertised in successful replies on rotating streams (`next-key`); zero advertises
    /// none. Needs the rotation prefetcher (cache on, `rotation-lead` above 0), whose passes read the schedules.
    package var prefetchWindow: Duration = .zero
    /// Between the advertised window's end and the rotation boundary.
    package var prefetchMargin: Duration = .zero
    package var guardsEnabled = true
    /// How long a reply is kept so a redelivered job gets the same bytes.
    package var replyTTL: Duration = .zero
    /// One rate window: tenants' rate limits count jobs per account per window.
    package var rateWindow: Duration = .zero
    /// Nil: spans are not exported (no endpoint, or tracing off).
    package var otlp: OTLPTracingConfiguration?
    /// An endpoint was configured without `--tracing`: worth a warning.
    package var otlpWithoutTracing = false
    /// Each setting as resolved, its value already redacted, for `--check-config`.
    package var report: [ResolvedSetting] = []

    package init(worker: WorkerConfiguration, redisURL: String, credentials: String, cryptoThreads: Int) {
        self.worker = worker
        self.redisURL = redisURL
        self.credentials = credentials
        self.cryptoThreads = cryptoThreads
    }

    /// The advertised window as the worker's processor takes it, in milliseconds.
    package var prefetchAdvice: PrefetchWindow {
        PrefetchWindow(windowMilliseconds: Self.milliseconds(prefetchWindow), marginMilliseconds: Self.milliseconds(prefetchMargin))
    }

    /// A duration in whole milliseconds, for the worker's millisecond fields.
    package static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    /// One line of `--check-config`: a key, its value (secrets redacted) and where it came from.
    package struct ResolvedSetting: Sendable, Equatable {
        package var key: String
        package var value: String
        /// `--flag`, `ENV_NAME`, `"key" in FILE` or `default`.
        package var source: String
    }

    /// The settings as `--check-config` prints them: one `key = value  (source)` line each.
    package var summary: String {
        let width = report.map(\.key.count).max() ?? 0
        return report.map { line in
            line.key.padding(toLength: width, withPad: " ", startingAt: 0) + " = " + line.value + "  (" + line.source + ")"
        }.joined(separator: "\n")
    }

    /// Resolves flags over the environment over the config file.
    ///
    /// - Parameters:
    ///   - flags: Values given on the command line, by config-file key (``ServeSetting/key``); map
    ///     settings as `.list` of `KEY=VALUE`.
    ///   - configFile: The JSON config file's path; nil uses `KSM_CONFIG` if set, else no file.
    ///   - defaultInstanceID: The OTLP service instance when no `instance-id` is set.
    package static func resolve(
        flags: [String: ConfigFlagValue], environment: [String: String], configFile: String? = nil,
        defaultInstanceID: String = "ksm"
    ) throws(ServeConfigurationError) -> ServeConfiguration {
        var resolver = ServeConfigurationResolver(
            flags: flags, environment: environment,
            configFile: configFile ?? environment[ServeSetting.config.environment])
        let configuration = resolver.resolve(defaultInstanceID: defaultInstanceID)
        guard resolver.problems.isEmpty else { throw ServeConfigurationError(problems: resolver.problems) }
        return configuration
    }

    /// Resolves `ksm serve`'s command-line arguments (read against ``ServeSetting/all``) over the
    /// environment over the config file (`--config`, else `KSM_CONFIG`); a malformed command line
    /// is reported with the configuration's other problems.
    package static func resolve(
        arguments: [String], environment: [String: String], defaultInstanceID: String = "ksm"
    ) throws(ServeConfigurationError) -> ServeConfiguration {
        let commandLine = ServeCommandLine(arguments)
        var configFile: String?
        if case .string(let path) = commandLine.flags[ServeSetting.config.key] { configFile = path }
        do throws(ServeConfigurationError) {
            let configuration = try resolve(
                flags: commandLine.flags, environment: environment, configFile: configFile, defaultInstanceID: defaultInstanceID)
            guard commandLine.problems.isEmpty else { throw ServeConfigurationError(problems: commandLine.problems) }
            return configuration
        } catch {
            throw ServeConfigurationError(problems: commandLine.problems + error.problems.filter { !commandLine.problems.contains($0) })
        }
    }
}
