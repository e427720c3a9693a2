import Foundation
import KSMService
import Logging
import RedisStore

/// `ksm edge`'s settings resolved from its flags over the environment over the defaults, every
/// problem collected and named (``ServeConfigurationError``), none of them connected to.
extension EdgeConfiguration {
    /// What the command line gave; nil (or empty) where a flag was not given.
    package struct Flags: Sendable {
        package var listen: String?
        package var brokers: String?
        package var requestsTopic: String?
        /// True when `--class-topics` was given.
        package var classTopics: Bool
        package var kafkaProperties: [String]
        /// `--kafka-property-file NAME=PATH` entries: secret librdkafka properties read from files.
        package var kafkaPropertyFiles: [String]
        package var redisURL: String?
        package var logLevel: String?
        package var logFormat: String?
        /// Seconds, as written.
        package var deadline: String?
        package var maxInFlight: Int?
        package var instanceID: String?
        package var replyTopicPrefix: String?
        package var maxRequestBytes: Int?
        package var tlsCertificate: String?
        package var tlsPrivateKey: String?
        package var admission = EdgeAdmissionSettings.Flags()

        package init(
            listen: String? = nil, brokers: String? = nil, requestsTopic: String? = nil, classTopics: Bool = false, kafkaProperties: [String] = [],
            kafkaPropertyFiles: [String] = [],
            redisURL: String? = nil, logLevel: String? = nil, logFormat: String? = nil, deadline: String? = nil, maxInFlight: Int? = nil,
            instanceID: String? = nil, replyTopicPrefix: String? = nil, maxRequestBytes: Int? = nil, tlsCertificate: String? = nil,
            tlsPrivateKey: String? = nil
        ) {
            self.listen = listen
            self.brokers = brokers
            self.requestsTopic = requestsTopic
            self.classTopics = classTopics
            self.kafkaProperties = kafkaProperties
            self.kafkaPropertyFiles = kafkaPropertyFiles
            self.redisURL = redisURL
            self.logLevel = logLevel
            self.logFormat = logFormat
            self.deadline = deadline
            self.maxInFlight = maxInFlight
            self.instanceID = instanceID
            self.replyTopicPrefix = replyTopicPrefix
            self.maxRequestBytes = maxRequestBytes
            self.tlsCertificate = tlsCertificate
            self.tlsPrivateKey = tlsPrivateKey
        }
    }

    /// Flags over the environment over the defaults; every problem is collected before throwing.
    /// - Parameter hostName: the default instance ID (the host's name, a pod's name in Kubernetes).
    package static func resolve(
        _ flags: Flags, environment: [String: String], hostName: String = ProcessInfo.processInfo.hostName
    ) throws(ServeConfigurationError) -> EdgeConfiguration {
        var problems: [ConfigurationProblem] = []
        func given(_ flag: String?, _ flagName: String, _ variable: String) -> (String, String)? {
            flag.map { ($0, flagName) } ?? environment[variable].map { ($0, variable) }
        }

        let listen = given(flags.listen, "--listen", listenEnvironment) ?? (defaultListen, "default")
        let address = ListenAddress.resolve(listen.0, source: listen.1, problems: &problems)

        let brokersVariable = ServeSetting.brokers.environment
        let brokers = given(flags.brokers, "--brokers", brokersVariable).map { $0.0.trimmingWhiteSpace }
        if brokers?.isEmpty ?? true {
            problems.append(.init(.missing, source: "--brokers", message: "No brokers given: pass --brokers or set \(brokersVariable)."))
        }

        let topicVariable = ServeSetting.requestsTopic.environment
        let requestsTopic = given(flags.requestsTopic, "--requests-topic", topicVariable) ?? (ServeSetting.requestsTopic.defaultText ?? "", "default")
        if !ReplyTopicPolicy.isValidTopicName(requestsTopic.0) {
            problems.append(
                .init(
                    .invalidValue, source: requestsTopic.1,
                    message: "\(requestsTopic.1) is \"\(requestsTopic.0)\", which is not a Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -)."))
        }

        var classTopics = ServeSetting.classTopics.defaultText == "true"
        if flags.classTopics {
            classTopics = true
        } else if let text = environment[ServeSetting.classTopics.environment] {
            switch text.lowercased() {
            case "true", "1", "yes": classTopics = true
            case "false", "0", "no", "": classTopics = false
            default:
                problems.append(
                    .init(
                        .invalidValue, source: ServeSetting.classTopics.environment, message: "\(ServeSetting.classTopics.environment) must be true or false."))
            }
        }

        // As ksm serve merges them: the environment's pairs (semicolon-separated), then the flags'.
        var kafkaProperties: [String: String] = [:]
        let propertiesVariable = ServeSetting.kafkaProperties.environment
        let environmentPairs = (environment[propertiesVariable] ?? "").split(separator: ";").map { ($0.trimmingWhiteSpace, propertiesVariable) }
        for (entry, source) in environmentPairs + flags.kafkaProperties.map({ ($0, "--kafka-property") }) where !entry.isEmpty {
            guard let eq = entry.firstIndex(of: "="), eq != entry.startIndex else {
                // Never quoted: a librdkafka value may be part of a secret.
                problems.append(
                    .init(.invalidValue, source: source, message: "\(source) takes KEY=VALUE pairs; an entry (not shown: it may hold a secret) has no key."))
                continue
            }
            kafkaProperties[String(entry[..<eq])] = String(entry[entry.index(after: eq)...])
        }
        // Secret properties (a SASL password) from files, exactly as ksm serve reads them, so one
        // `ksm-kafka` Secret and one KSM_KAFKA_PROPERTY_FILES serve the workers and the edge.
        var propertyFiles: [String: String] = [:]
        let filesVariable = ServeSetting.kafkaPropertyFiles.environment
        let fileEntries = (environment[filesVariable] ?? "").split(separator: ",").map { ($0.trimmingWhiteSpace, filesVariable) }
        for (entry, source) in fileEntries + flags.kafkaPropertyFiles.map({ ($0, "--kafka-property-file") }) where !entry.isEmpty {
            guard let eq = entry.firstIndex(of: "="), eq != entry.startIndex else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) takes NAME=PATH pairs; an entry has no property name."))
                continue
            }
            propertyFiles[String(entry[..<eq])] = String(entry[entry.index(after: eq)...])
        }
        let fromFiles = KafkaPropertyFiles.read(propertyFiles, inline: kafkaProperties)
        kafkaProperties.merge(fromFiles.properties) { inline, _ in inline }
        for file in fromFiles.problems {
            let source = flags.kafkaPropertyFiles.isEmpty ? filesVariable : "--kafka-property-file"
            problems.append(.init(.unreadableFile, source: source, message: "\(source): \(file.description)."))
        }

        let redisVariable = ServeSetting.redisURL.environment
        let redisURL = given(flags.redisURL, "--redis-url", redisVariable)
        if let (url, source) = redisURL {
            do throws(RedisError) {
                _ = try RedisEndpoint(url: url)
            } catch {
                problems.append(.init(.invalidValue, source: source, message: "\(source) cannot be used: \(error.message)."))
            }
        }

        var logLevel = Logger.Level.info
        if let (text, source) = given(flags.logLevel, "--log-level", ServeSetting.logLevel.environment) {
            if let level = Logger.Level(rawValue: text) {
                logLevel = level
            } else {
                let words = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(text)\": use one of \(words)."))
            }
        }
        var logFormat = LogFormat.text
        if let (text, source) = given(flags.logFormat, "--log-format", ServeSetting.logFormat.environment) {
            if let format = LogFormat(rawValue: text) {
                logFormat = format
            } else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(text)\": use text or json."))
            }
        }

        var deadline = defaultDeadline
        if let (text, source) = given(flags.deadline, "--deadline", deadlineEnvironment) {
            if let seconds = Double(text.trimmingWhiteSpace), seconds.isFinite, deadlineRange.contains(seconds) {
                deadline = .milliseconds(Int64((seconds * 1_000).rounded()))
            } else {
                problems.append(
                    .init(
                        .outOfRange, source: source,
                        message: "\(source) must be a number of seconds from \(deadlineRange.lowerBound) to \(Int(deadlineRange.upperBound))."))
            }
        }

        func integer(_ flag: Int?, _ flagName: String, _ variable: String, _ range: ClosedRange<Int>, default value: Int) -> Int {
            let written: (Int?, String)? = flag.map { ($0, flagName) } ?? environment[variable].map { (Int($0.trimmingWhiteSpace), variable) }
            guard let (number, source) = written else { return value }
            guard let number, range.contains(number) else {
                problems.append(
                    .init(.outOfRange, source: source, message: "\(source) must be a whole number from \(range.lowerBound) to \(range.upperBound)."))
                return value
            }
            return number
        }
        let maximumInFlight = integer(flags.maxInFlight, "--max-in-flight", maxInFlightEnvironment, inFlightRange, default: defaultMaximumInFlight)
        let maximumRequestBytes = integer(
            flags.maxRequestBytes, "--max-request-bytes", maxRequestBytesEnvironment, requestBytesRange, default: defaultMaximumRequestBytes)

        let instance = given(flags.instanceID, "--instance-id", instanceIDEnvironment) ?? (hostName, "the host name")
        let prefix = given(flags.replyTopicPrefix, "--reply-topic-prefix", replyTopicPrefixEnvironment) ?? (defaultReplyTopicPrefix, "default")
        if instance.0.isEmpty || !ReplyTopicPolicy.isValidTopicName(instance.0) {
            problems.append(
                .init(
                    .invalidValue, source: instance.1,
                    message:
                        "\(instance.1) is \"\(instance.0)\": the instance ID names this edge's reply topic, so it must be 1 to 249 of a-z A-Z 0-9 . _ - (pass --instance-id, e.g. the pod name)."
                ))
        } else if !ReplyTopicPolicy.isValidTopicName(prefix.0 + instance.0) {
            problems.append(
                .init(
                    .invalidValue, source: prefix.1,
                    message: "\(prefix.1) \"\(prefix.0)\" and the instance ID make \"\(prefix.0 + instance.0)\", which is not a Kafka topic name."))
        }

        var tls: TLSFiles?
        do throws(ConfigurationProblem) {
            tls = try TLSFiles.resolve(certificate: flags.tlsCertificate, privateKey: flags.tlsPrivateKey, environment: environment, names: tlsNames)
        } catch {
            problems.append(error)
        }

        let admission = EdgeAdmissionSettings.resolve(flags.admission, environment: environment, problems: &problems)

        guard problems.isEmpty, let address, let brokers else { throw ServeConfigurationError(problems: problems) }
        var configuration = EdgeConfiguration(
            host: address.host, port: address.port, brokers: brokers, requestsTopic: requestsTopic.0, classTopics: classTopics,
            kafkaProperties: kafkaProperties, redisURL: redisURL?.0, logLevel: logLevel, logFormat: logFormat, deadline: deadline,
            maximumInFlight: maximumInFlight, instanceID: instance.0, replyTopicPrefix: prefix.0, maximumRequestBytes: maximumRequestBytes, tls: tls)
        configuration.admission = admission
        return configuration
    }
}
