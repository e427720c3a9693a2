import KSMService
import Logging
import RedisStore

/// `ksm speke`'s resolved settings: where it listens (and with which TLS certificate, if any), the
/// Redis it reads and writes, the tenants' key-encryption keys, its logs and the largest body it reads.
///
/// The settings `ksm serve` also has (`--redis-url`, `--kek`, `--log-level`, `--log-format`) mean
/// the same here and are read from the same environment variables, named by their ``ServeSetting``
/// declarations, so a deployment gives both commands one set of variables. The service has few
/// settings and no config file, so this is a typed struct resolved from flags over the environment,
/// not a second setting table.
package struct SpekeConfiguration: Sendable {
    /// The address to bind; `0.0.0.0` for every IPv4 interface, `::` for every interface.
    package var host: String
    package var port: Int
    /// `redis://` or `redis-cluster://`, as for `ksm serve`. Secret: shown redacted.
    package var redisURL: String
    /// Key-encryption key ID to file path (`--kek`, `KSM_KEK_FILES`); `KSM_KEKS` is read at start-up.
    package var keyEncryptionKeyFiles: [String: String]
    package var logLevel: Logger.Level
    package var logFormat: LogFormat
    /// Largest POST body read, in bytes; a larger one is answered 413 before it is parsed.
    package var maximumRequestBytes: Int
    /// The PEM files HTTPS is served with; nil for plain HTTP (TLS ends at an ingress).
    package var tls: TLSFiles?

    /// Default: 1 MiB (a CPIX request for dozens of keys is a few kB).
    package static let defaultMaximumRequestBytes = 1 << 20
    /// Accepted `--max-request-bytes`: 1 KiB to 64 MiB.
    package static let requestBytesRange = 1_024...(64 << 20)
    /// Default `--listen`.
    package static let defaultListen = "0.0.0.0:8080"
    /// The environment variables only `ksm speke` reads.
    package static let listenEnvironment = "KSM_SPEKE_LISTEN"
    package static let maxRequestBytesEnvironment = "KSM_SPEKE_MAX_REQUEST_BYTES"
    /// `--tls-certificate` / `KSM_SPEKE_TLS_CERTIFICATE` and `--tls-private-key` / `KSM_SPEKE_TLS_PRIVATE_KEY`.
    package static let tlsNames = TLSFiles.Names(environmentPrefix: "KSM_SPEKE")

    /// What the command line gave; nil (or empty) where a flag was not given.
    package struct Flags: Sendable {
        package var listen: String?
        package var redisURL: String?
        package var kek: [String]
        package var logLevel: String?
        package var logFormat: String?
        package var maxRequestBytes: Int?
        package var tlsCertificate: String?
        package var tlsPrivateKey: String?

        package init(
            listen: String? = nil, redisURL: String? = nil, kek: [String] = [], logLevel: String? = nil, logFormat: String? = nil,
            maxRequestBytes: Int? = nil, tlsCertificate: String? = nil, tlsPrivateKey: String? = nil
        ) {
            self.listen = listen
            self.redisURL = redisURL
            self.kek = kek
            self.logLevel = logLevel
            self.logFormat = logFormat
            self.maxRequestBytes = maxRequestBytes
            self.tlsCertificate = tlsCertificate
            self.tlsPrivateKey = tlsPrivateKey
        }
    }

    /// Flags over the environment over the defaults; every problem is collected before throwing.
    package static func resolve(_ flags: Flags, environment: [String: String]) throws(ServeConfigurationError) -> SpekeConfiguration {
        var problems: [ConfigurationProblem] = []
        let listen = flags.listen.map { ($0, "--listen") } ?? environment[listenEnvironment].map { ($0, listenEnvironment) } ?? (defaultListen, "default")
        let address = ListenAddress.resolve(listen.0, source: listen.1, problems: &problems)

        let redisVariable = ServeSetting.redisURL.environment
        let redisURL = flags.redisURL.map { ($0, "--redis-url") } ?? environment[redisVariable].map { ($0, redisVariable) }
        if let (url, source) = redisURL {
            do throws(RedisError) {
                _ = try RedisEndpoint(url: url)
            } catch {
                problems.append(.init(.invalidValue, source: source, message: "\(source) cannot be used: \(error.message)."))
            }
        } else {
            problems.append(.init(.missing, source: "--redis-url", message: "No redis-url given: pass --redis-url or set \(redisVariable)."))
        }

        var files: [String: String] = [:]
        let kekVariable = ServeSetting.kek.environment
        let environmentPairs = environment[kekVariable].map { $0.split(separator: ",").map { String($0).trimmingWhiteSpace } } ?? []
        for (pair, source) in environmentPairs.map({ ($0, kekVariable) }) + flags.kek.map({ ($0, "--kek") }) where !pair.isEmpty {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex, pair.index(after: eq) != pair.endIndex else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) takes ID=PATH pairs; an entry has no ID or no path."))
                continue
            }
            files[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }

        let levelVariable = ServeSetting.logLevel.environment
        let levelText = flags.logLevel.map { ($0, "--log-level") } ?? environment[levelVariable].map { ($0, levelVariable) }
        var logLevel = Logger.Level.info
        if let (text, source) = levelText {
            if let level = Logger.Level(rawValue: text) {
                logLevel = level
            } else {
                let words = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(text)\": use one of \(words)."))
            }
        }

        let formatVariable = ServeSetting.logFormat.environment
        let formatText = flags.logFormat.map { ($0, "--log-format") } ?? environment[formatVariable].map { ($0, formatVariable) }
        var logFormat = LogFormat.text
        if let (text, source) = formatText {
            if let format = LogFormat(rawValue: text) {
                logFormat = format
            } else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(text)\": use text or json."))
            }
        }

        var maximumRequestBytes = defaultMaximumRequestBytes
        let bytesGiven: (Int?, String)? =
            flags.maxRequestBytes.map { ($0, "--max-request-bytes") }
            ?? environment[maxRequestBytesEnvironment].map { (Int($0), maxRequestBytesEnvironment) }
        if let (value, source) = bytesGiven {
            if let value, requestBytesRange.contains(value) {
                maximumRequestBytes = value
            } else {
                problems.append(
                    .init(
                        .outOfRange, source: source,
                        message: "\(source) must be a whole number from \(requestBytesRange.lowerBound) to \(requestBytesRange.upperBound)."))
            }
        }

        var tls: TLSFiles?
        do throws(ConfigurationProblem) {
            tls = try TLSFiles.resolve(certificate: flags.tlsCertificate, privateKey: flags.tlsPrivateKey, environment: environment, names: tlsNames)
        } catch {
            problems.append(error)
        }

        guard problems.isEmpty, let address, let redisURL else { throw ServeConfigurationError(problems: problems) }
        return SpekeConfiguration(
            host: address.host, port: address.port, redisURL: redisURL.0, keyEncryptionKeyFiles: files, logLevel: logLevel, logFormat: logFormat,
            maximumRequestBytes: maximumRequestBytes, tls: tls)
    }

    package init(
        host: String, port: Int, redisURL: String, keyEncryptionKeyFiles: [String: String] = [:], logLevel: Logger.Level = .info,
        logFormat: LogFormat = .text, maximumRequestBytes: Int = defaultMaximumRequestBytes, tls: TLSFiles? = nil
    ) {
        self.host = host
        self.port = port
        self.redisURL = redisURL
        self.keyEncryptionKeyFiles = keyEncryptionKeyFiles
        self.logLevel = logLevel
        self.logFormat = logFormat
        self.maximumRequestBytes = maximumRequestBytes
        self.tls = tls
    }

    /// The settings as `--check-config` prints them, the Redis password redacted, the TLS files by
    /// path only.
    package var summary: String {
        let keks = keyEncryptionKeyFiles.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        return
            ([
                "listen            = \(host.contains(":") ? "[\(host)]" : host):\(port)",
                "redis-url         = \(Redaction.redactedURL(redisURL))",
                "kek               = \(keks.isEmpty ? "(none)" : keks)",
                "log-level         = \(logLevel.rawValue)",
                "log-format        = \(logFormat.rawValue)",
                "max-request-bytes = \(maximumRequestBytes)",
            ] + TLSFiles.summary(tls, width: 18)).joined(separator: "\n")
    }

    /// The TLS server configuration from ``tls``, the files read and checked
    /// (``TLSFiles/serverConfiguration()``); nil for plain HTTP.
    package func tlsConfiguration() throws(ConfigurationProblem) -> ServerTLS? {
        try tls?.serverConfiguration()
    }

    /// Every key-encryption key, read as `ksm serve` reads them (``ServeConfiguration/keyring(files:)``).
    package func keyring() throws(KeyFile.Error) -> KeyEncryptionKeyring {
        try ServeConfiguration.keyring(files: keyEncryptionKeyFiles)
    }
}
