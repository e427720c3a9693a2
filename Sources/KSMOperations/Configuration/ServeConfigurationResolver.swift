import Configuration
import FairPlay
import Foundation
import KSMService
import Licensing
import Logging
import NIOCore
import OwnedThreads
import RedisStore
import Wire

/// Resolves ``ServeConfiguration`` from three layers, collecting every problem on the way.
///
/// Scalars are read through swift-configuration: a `ConfigReader` over an `InMemoryProvider` of the
/// flags, the process environment (`EnvironmentVariablesProvider`, its keys mapped to the `KSM_*`
/// names by a `KeyMappingProvider`) and an `InMemoryProvider` of the config file's checked values.
/// The file itself is parsed and checked here, not by the library's `FileProvider<JSONSnapshot>`:
/// the library ignores keys nobody reads (so `redsi-url` would pass silently), flattens objects into
/// dotted keys (librdkafka's `security.protocol` inside `kafka-properties` would become two levels)
/// and cannot list a map's entries. Maps (`kek`, `kafka-properties`, `tenant-weights`) are merged
/// here entry by entry, file then environment then flags, as before.
struct ServeConfigurationResolver {
    let flags: [String: ConfigFlagValue]
    let environment: [String: String]
    let configFile: String?
    /// The config file's top-level members, after the unknown-key check.
    private(set) var file: [String: JSONValue] = [:]
    private(set) var problems: [ConfigurationProblem] = []
    /// File keys refused for their type: reported once, and not reported again as missing.
    private var refused: Set<String> = []
    private var report: [ServeConfiguration.ResolvedSetting] = []
    /// Replaced in ``resolve(defaultInstanceID:)`` once the file is read; the library needs one provider.
    private var reader = ConfigReader(providers: [InMemoryProvider(values: [:])])

    init(flags: [String: ConfigFlagValue], environment: [String: String], configFile: String?) {
        self.flags = flags
        self.environment = environment
        self.configFile = configFile
    }

    private var fileName: String { configFile.map { ($0 as NSString).lastPathComponent } ?? "the config file" }

    // MARK: - Layers

    private mutating func loadFile() {
        guard let configFile else { return }
        guard let data = FileManager.default.contents(atPath: configFile) else {
            problems.append(
                .init(
                    .unreadableFile, source: configFile,
                    message: "Cannot read the config file \(configFile): check the path given to --config or KSM_CONFIG and that this user may read it."))
            return
        }
        let value: JSONValue
        do {
            value = try LenientJSON.value(Array(data))
        } catch {
            problems.append(
                .init(
                    .unreadableFile, source: configFile,
                    message:
                        "The config file \(configFile) is not valid JSON (\(error.reason)): fix the syntax, or run ksm serve --check-config to see every problem."
                ))
            return
        }
        guard case .object(let members) = value else {
            problems.append(
                .init(
                    .wrongType, source: configFile,
                    message: "The config file \(configFile) must hold one JSON object whose keys are the long flags' names, e.g. {\"brokers\": \"kafka:9092\"}."
                ))
            return
        }
        for key in members.keys.sorted() where ServeSetting.byKey[key] == nil {
            let suggestion = Self.closest(to: key).map { " Did you mean \"\($0)\"?" } ?? ""
            problems.append(
                .init(
                    .unknownKey, source: "\"\(key)\" in \(fileName)",
                    message: "Unknown key \"\(key)\" in the config file \(configFile).\(suggestion) Keys are the long flags' names; see ksm serve --help."))
        }
        file = members.filter { ServeSetting.byKey[$0.key] != nil }
    }

    /// The known key with the smallest edit distance, if it is close (a typo, not another word).
    static func closest(to key: String) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            var previous = Array(0...b.count)
            for (i, ca) in a.enumerated() {
                var current = [i + 1] + Array(repeating: 0, count: b.count)
                for (j, cb) in b.enumerated() {
                    current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
                }
                previous = current
            }
            return previous[b.count]
        }
        let best = ServeSetting.all.map { ($0.key, distance(Array(key), Array($0.key))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, key.count / 4) else { return nil }
        return best.0
    }

    /// The file's scalar values, checked against each setting's JSON type, for the file provider.
    private mutating func fileValues() -> [AbsoluteConfigKey: ConfigValue] {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, json) in file {
            guard let setting = ServeSetting.byKey[key] else { continue }
            let content: ConfigContent?
            switch (setting.kind, json) {
            case (.string, .string(let s)): content = .string(s)
            case (.integer, .integer(let i)): content = Int(exactly: i).map { .int($0) }
            case (.integer, .number(let d)) where d == d.rounded() && abs(d) < 1e15: content = .int(Int(d))
            case (.number, .integer(let i)): content = .double(Double(i))
            case (.number, .number(let d)): content = .double(d)
            case (.boolean, .bool(let b)): content = .bool(b)
            case (.integerList, .array(let elements)):
                let ints = elements.compactMap { element -> Int? in
                    if case .integer(let i) = element { return Int(exactly: i) }
                    return nil
                }
                content = ints.count == elements.count ? .intArray(ints) : nil
            case (.stringList, .array(let elements)):
                let strings = elements.compactMap { element -> String? in
                    if case .string(let s) = element { return s }
                    return nil
                }
                content = strings.count == elements.count ? .stringArray(strings) : nil
            case (.map, .object): continue  // merged by mergedMap
            default: content = nil
            }
            guard let content else {
                refused.insert(key)
                file[key] = nil
                problems.append(
                    .init(
                        .wrongType, source: "\"\(key)\" in \(fileName)",
                        message: "\"\(key)\" in the config file \(configFile ?? "") is \(Self.describe(json)); it must be \(Self.expected(setting.kind))."))
                continue
            }
            values[AbsoluteConfigKey([key])] = ConfigValue(content, isSecret: setting.isSecret)
        }
        return values
    }

    private func flagValues() -> [AbsoluteConfigKey: ConfigValue] {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, flag) in flags {
            let secret = ServeSetting.byKey[key]?.isSecret ?? false
            let content: ConfigContent
            switch flag {
            case .string(let s): content = .string(s)
            case .integer(let i): content = .int(i)
            case .number(let d): content = .double(d)
            case .boolean(let b): content = .bool(b)
            case .list(let l):
                switch ServeSetting.byKey[key]?.kind {
                case .integerList: content = .intArray(l.compactMap { Int($0) })
                case .stringList: content = .stringArray(l)
                default: continue
                }
            }
            values[AbsoluteConfigKey([key])] = ConfigValue(content, isSecret: secret)
        }
        return values
    }

    static func describe(_ json: JSONValue) -> String {
        switch json {
        case .null: "null"
        case .bool(let b): "the boolean \(b)"
        case .integer(let i): "the number \(i)"
        case .number(let d): "the number \(d)"
        case .string(let s): "the string \"\(s)\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func expected(_ kind: ServeSetting.Kind) -> String {
        switch kind {
        case .string: "a string"
        case .integer(let range): "a whole number from \(range.lowerBound) to \(range.upperBound)"
        case .number(let bounds): "a number \(bounds.sentence)"
        case .boolean: "true or false"
        case .integerList: "an array of whole numbers"
        case .stringList: "an array of strings"
        case .map(.strings): "an object whose values are strings"
        case .map(.librdkafkaProperties): "an object of librdkafka properties (strings, numbers or booleans)"
        case .map(.positiveNumbers): "an object whose values are positive numbers"
        }
    }

    // MARK: - Reading one setting

    /// Where the value in effect comes from: the first layer that has the key.
    func source(of setting: ServeSetting) -> String? {
        if flags[setting.key] != nil { return setting.flagName ?? setting.key }
        if let name = setting.environment, environment[name] != nil { return name }
        if file[setting.key] != nil { return "\"\(setting.key)\" in \(fileName)" }
        return nil
    }

    private func written(_ setting: ServeSetting) -> String {
        if let flag = flags[setting.key] {
            switch flag {
            case .string(let s): return s
            case .integer(let i): return String(i)
            case .number(let d): return String(d)
            case .boolean(let b): return String(b)
            case .list(let l): return l.joined(separator: ",")
            }
        }
        if let name = setting.environment, let value = environment[name] { return value }
        if let json = file[setting.key] { return Self.describe(json) }
        return ""
    }

    private mutating func typeProblem(_ setting: ServeSetting) {
        let where_ = source(of: setting) ?? setting.key
        let shown = setting.isSecret ? "(hidden)" : "\"\(written(setting))\""
        problems.append(
            .init(
                .wrongType, source: where_,
                message: "\(where_) is \(shown), which is not \(Self.expected(setting.kind)): set it to \(Self.expected(setting.kind)) or remove it."))
    }

    private mutating func rangeProblem(_ setting: ServeSetting, _ shown: String) {
        let where_ = source(of: setting) ?? setting.key
        problems.append(
            .init(
                .outOfRange, source: where_,
                message: "\(where_) is \(shown), out of range: it must be \(Self.expected(setting.kind))."))
    }

    /// Notes the value for `--check-config`.
    private mutating func note(_ key: String, _ value: String, default isDefault: Bool = false) {
        let setting = ServeSetting.byKey[key]
        let from = isDefault ? "default" : setting.flatMap { source(of: $0) } ?? "default"
        report.append(.init(key: key, value: value, source: from))
    }

    /// A present value the library could not convert is a type problem; absent is nil.
    private mutating func read<T>(_ key: String, _ get: (ConfigReader, ConfigKey) throws -> T) -> T? {
        guard let setting = ServeSetting.byKey[key], source(of: setting) != nil else { return nil }
        do {
            return try get(reader, ConfigKey([key]))
        } catch {
            typeProblem(setting)
            return nil
        }
    }

    mutating func string(_ key: String) -> String? {
        let secret = ServeSetting.byKey[key]?.isSecret ?? false
        let value = read(key) { try $0.requiredString(forKey: $1, isSecret: secret) }
        if let value { note(key, secret ? Redaction.redactedURL(value) : value) }
        return value
    }

    mutating func integer(_ key: String, default value: Int?) -> Int? {
        guard let setting = ServeSetting.byKey[key], case .integer(let range) = setting.kind else { return value }
        guard let read = read(key, { try $0.requiredInt(forKey: $1) }) else {
            if let value { note(key, String(value), default: true) }
            return value
        }
        guard range.contains(read) else {
            rangeProblem(setting, String(read))
            return value
        }
        note(key, String(read))
        return read
    }

    mutating func number(_ key: String, default value: Double) -> Double {
        guard let setting = ServeSetting.byKey[key], case .number(let bounds) = setting.kind else { return value }
        guard let read = read(key, { try $0.requiredDouble(forKey: $1) }) else {
            note(key, ServeSetting.NumberBounds.format(value), default: true)
            return value
        }
        guard bounds.contains(read) else {
            rangeProblem(setting, String(read))
            return value
        }
        note(key, ServeSetting.NumberBounds.format(read))
        return read
    }

    mutating func boolean(_ key: String, default value: Bool) -> Bool {
        let read = read(key) { try $0.requiredBool(forKey: $1) }
        note(key, String(read ?? value), default: read == nil)
        return read ?? value
    }

    mutating func seconds(_ key: String, default value: Double) -> Duration {
        .milliseconds(Int64((number(key, default: value) * 1000).rounded()))
    }

    // MARK: - Maps

    /// `KEY=VALUE` split at the first `=`; nil, with a problem noted, when there is no key.
    /// - Parameter quoted: false where the text may be part of a secret (a librdkafka password cut
    ///   at a separator): the problem then names the entry without showing it.
    private mutating func pair(_ text: String, _ where_: String, quoted: Bool = true) -> (String, String)? {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            let shown = quoted ? "\"\(text)\"" : "an entry (not shown: it may hold a secret)"
            problems.append(
                .init(
                    .invalidValue, source: where_,
                    message:
                        "\(where_) takes KEY=VALUE pairs; \(shown) has no key: write it as KEY=VALUE\(quoted ? "" : ", and give a secret as a file (--kafka-property-file NAME=PATH)")."
                ))
            return nil
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }

    /// A map setting: the file's object, then the environment's pairs, then the flags' pairs, entry by entry.
    /// A file object with one value of the wrong type is refused whole, naming that entry: never half-read.
    mutating func map(_ key: String, environmentSeparator: Character = ",", readsEnvironment: Bool = true) -> [String: String] {
        guard let setting = ServeSetting.byKey[key], case .map(let values) = setting.kind else { return [:] }
        var result: [String: String] = [:]
        if let json = file[key] {
            if case .object(let members) = json {
                var entries: [String: String] = [:]
                var bad = false
                for (name, member) in members.sorted(by: { $0.key < $1.key }) {
                    let text: String?
                    switch (values, member) {
                    case (_, .string(let s)) where values != .positiveNumbers: text = s
                    case (.librdkafkaProperties, .integer(let i)): text = String(i)
                    case (.librdkafkaProperties, .number(let d)): text = ServeSetting.NumberBounds.format(d)
                    case (.librdkafkaProperties, .bool(let b)): text = b ? "true" : "false"
                    case (.positiveNumbers, .integer(let i)): text = String(i)
                    case (.positiveNumbers, .number(let d)): text = String(d)
                    default: text = nil
                    }
                    guard let text else {
                        bad = true
                        problems.append(
                            .init(
                                .wrongType, source: "\"\(key)\".\"\(name)\" in \(fileName)",
                                message:
                                    "\"\(name)\" under \"\(key)\" in the config file \(configFile ?? "") is \(Self.describe(member)); \"\(key)\" must be \(Self.expected(setting.kind)). The whole \"\(key)\" object is refused."
                            ))
                        continue
                    }
                    entries[name] = text
                }
                if !bad { result = entries }
            } else {
                problems.append(
                    .init(
                        .wrongType, source: "\"\(key)\" in \(fileName)",
                        message: "\"\(key)\" in the config file \(configFile ?? "") is \(Self.describe(json)); it must be \(Self.expected(setting.kind))."))
            }
        }
        let quoted = !(setting.isSecret || values == .librdkafkaProperties)
        if readsEnvironment, let name = setting.environment, let text = environment[name] {
            for item in text.split(separator: environmentSeparator) where !item.trimmingCharacters(in: .whitespaces).isEmpty {
                if let (k, v) = pair(item.trimmingCharacters(in: .whitespaces), name, quoted: quoted) { result[k] = v }
            }
        }
        if case .list(let items) = flags[key] {
            for item in items { if let (k, v) = pair(item, setting.flagName ?? key, quoted: quoted) { result[k] = v } }
        }
        if values == .positiveNumbers {
            for (name, text) in result {
                guard let weight = Double(text), weight > 0, weight.isFinite else {
                    problems.append(
                        .init(
                            .outOfRange, source: setting.flagName ?? key,
                            message: "\(setting.flagName ?? key) \(name)=\(text): the weight must be a positive number."))
                    result[name] = nil
                    continue
                }
            }
        }
        if !result.isEmpty {
            let shown = result.sorted { $0.key < $1.key }.map { name, value in
                let hidden = setting.isSecret || (values == .librdkafkaProperties && Redaction.isSecretKafkaProperty(name))
                return "\(name)=\(hidden ? Redaction.placeholder : value)"
            }
            report.append(.init(key: key, value: shown.joined(separator: ", "), source: sourceOfMap(setting)))
        }
        return result
    }

    private func sourceOfMap(_ setting: ServeSetting) -> String {
        var layers: [String] = []
        if file[setting.key] != nil { layers.append("\"\(setting.key)\" in \(fileName)") }
        if let name = setting.environment, environment[name] != nil { layers.append(name) }
        if flags[setting.key] != nil { layers.append(setting.flagName ?? setting.key) }
        return layers.joined(separator: " + ")
    }

    // MARK: - The whole configuration

    mutating func resolve(defaultInstanceID: String) -> ServeConfiguration? {
        loadFile()
        let keyMapping: [String: String] = Dictionary(uniqueKeysWithValues: ServeSetting.all.compactMap { s in s.environment.map { (s.key, $0) } })
        let secretVariables = Set(ServeSetting.all.filter(\.isSecret).compactMap(\.environment))
        reader = ConfigReader(providers: [
            InMemoryProvider(name: "flags", values: flagValues()),
            KeyMappingProvider(
                upstream: EnvironmentVariablesProvider(environmentVariables: environment, secretsSpecifier: .specific(secretVariables)),
                keyMapper: { key in AbsoluteConfigKey([keyMapping[key.components.joined(separator: ".")] ?? "KSM_UNMAPPED"]) }),
            InMemoryProvider(name: "file", values: fileValues()),
        ])
        if let configFile { report.append(.init(key: "config", value: configFile, source: flags["config"] != nil ? "--config" : "KSM_CONFIG")) }

        let brokers = string("brokers")
        let redisURL = string("redis-url")
        let credentials = string("credentials")
        for (value, key) in [(brokers, "brokers"), (redisURL, "redis-url"), (credentials, "credentials")] where value == nil {
            guard let setting = ServeSetting.byKey[key], source(of: setting) == nil, !refused.contains(key) else { continue }
            problems.append(
                .init(
                    .missing, source: "--\(key)",
                    message: "No \(key) given: pass --\(key), set \(setting.environment ?? ""), or add \"\(key)\" to the config file."))
        }
        // Parsed here, not first at start-up, so --check-config names a URL the worker could not use;
        // the parser's messages name the part that is wrong, never a password's characters.
        if let redisURL, let setting = ServeSetting.byKey["redis-url"] {
            do throws(RedisError) {
                _ = try RedisEndpoint(url: redisURL)
            } catch {
                let where_ = source(of: setting) ?? "redis-url"
                problems.append(.init(.invalidValue, source: where_, message: "\(where_) cannot be used: \(error.message)."))
            }
        }
        var worker = WorkerConfiguration(brokers: brokers ?? "")
        worker.groupID = string("group") ?? worker.groupID
        worker.requestsTopic = string("requests-topic") ?? worker.requestsTopic
        worker.repliesTopic = string("replies-topic") ?? worker.repliesTopic
        worker.deadLetterTopic = string("dlq-topic") ?? worker.deadLetterTopic
        worker.classTopics = boolean("class-topics", default: false)
        checkTopics(worker)
        if let entries = read("reply-topics", { try $0.requiredStringArray(forKey: $1) }), let setting = ServeSetting.byKey["reply-topics"] {
            do {
                let policy = try ReplyTopicPolicy(entries: entries)
                worker.replyTopics = policy
                note("reply-topics", policy.entries.joined(separator: ","))
            } catch {
                problems.append(
                    .init(
                        .invalidValue, source: source(of: setting) ?? "reply-topics", message: "\(source(of: setting) ?? "reply-topics"): \(error.description)."
                    ))
            }
        } else if let setting = ServeSetting.byKey["reply-topics"], source(of: setting) == nil {
            note("reply-topics", worker.replyTopicPolicy.entries.joined(separator: ","), default: true)
        }
        worker.instanceID = string("instance-id")
        // librdkafka values may hold commas (debug contexts, lists): the environment separates pairs with ";".
        worker.kafkaProperties = map("kafka-properties", environmentSeparator: ";")
        if let setting = ServeSetting.byKey["kafka-property-files"] {
            let files = KafkaPropertyFiles.read(map("kafka-property-files"), inline: worker.kafkaProperties)
            worker.kafkaProperties.merge(files.properties) { inline, _ in inline }
            let where_ = sourceOfMap(setting)
            problems += files.problems.map { ConfigurationProblem(.unreadableFile, source: where_, message: "\(where_): \($0.description).") }
        }
        worker.maximumBatchSize = integer("max-batch-size", default: worker.maximumBatchSize) ?? worker.maximumBatchSize
        worker.maximumInFlight = integer("max-in-flight", default: worker.maximumInFlight) ?? worker.maximumInFlight
        worker.maximumRequestBytes = integer("max-request-bytes", default: worker.maximumRequestBytes) ?? worker.maximumRequestBytes
        worker.shutdownTimeout = seconds("shutdown-timeout", default: 25)
        worker.scheduling.enabled = boolean("scheduling", default: true)
        worker.scheduling.tenantWeights = map("tenant-weights").compactMapValues { Double($0) }
        worker.scheduling.prefetchMaximumWait = seconds("prefetch-max-wait", default: worker.scheduling.prefetchMaximumWait.seconds)
        worker.scheduling.newSessionMaximumWait = seconds("new-session-max-wait", default: worker.scheduling.newSessionMaximumWait.seconds)
        worker.scheduling.newSessionShare = number("new-session-share", default: worker.scheduling.newSessionShare)
        worker.scheduling.prefetchShare = number("prefetch-share", default: worker.scheduling.prefetchShare)
        if worker.scheduling.newSessionShare + worker.scheduling.prefetchShare > 0.5, let setting = ServeSetting.byKey["new-session-share"] {
            let where_ = source(of: setting) ?? ServeSetting.byKey["prefetch-share"].flatMap { source(of: $0) } ?? "new-session-share"
            problems.append(
                .init(
                    .outOfRange, source: where_,
                    message:
                        "new-session-share \(worker.scheduling.newSessionShare) and prefetch-share \(worker.scheduling.prefetchShare) add up to more than 0.5 of a batch: continuity must keep at least half; lower one of them."
                ))
        }
        worker.tenantLabelLimit = integer("tenant-label-limit", default: worker.tenantLabelLimit) ?? worker.tenantLabelLimit
        worker.tracing = boolean("tracing", default: false)

        // NIO's count reads a container's CPU quota (cgroup v1 and v2) and cpuset, so a pod limited to
        // 2 CPUs runs 2 crypto threads on any node; the affinity mask caps it too, so a worker started
        // under `taskset -c 0-3` runs 4 (ServeConfigurationCommandTests checks both).
        var configuration = ServeConfiguration(
            worker: worker, redisURL: redisURL ?? "", credentials: credentials ?? "",
            cryptoThreads: CPUAffinity.usableCores(NIOCore.System.coreCount))
        configuration.cryptoThreads = integer("crypto-threads", default: configuration.cryptoThreads) ?? configuration.cryptoThreads
        // Four batches per crypto thread keep the pool fed while other batches wait on Redis or a
        // delivery report (docs/performance.md §3: at four in all, two threads idled 8-10% of a storm).
        let batchesPerPool = WorkerConfiguration.concurrentBatches(forCryptoThreads: configuration.cryptoThreads)
        configuration.worker.concurrentBatches = integer("concurrent-batches", default: batchesPerPool) ?? batchesPerPool
        configuration.fpscryptoLibrary = string("fpscrypto-library")
        if let name = string("fpscrypto-generation") {
            if let generation = FPSCryptoLibrary.Generation(name: name) {
                configuration.fpscryptoGeneration = generation
            } else if let setting = ServeSetting.byKey["fpscrypto-generation"] {
                let known = FPSCryptoLibrary.Generation.all.map(\.name).joined(separator: " or ")
                problems.append(
                    .init(
                        .invalidValue, source: source(of: setting) ?? "--fpscrypto-generation",
                        message: "\(source(of: setting) ?? "--fpscrypto-generation") is \"\(name)\", an unknown libfpscrypto generation: use \(known)."))
            }
        }
        configuration.keyEncryptionKeyFiles = map("kek")
        if let versions = read("protocol-versions", { try $0.requiredIntArray(forKey: $1) }) {
            if let bad = versions.first(where: { UInt32(exactly: $0) == nil }), let setting = ServeSetting.byKey["protocol-versions"] {
                rangeProblem(setting, String(bad))
            } else {
                configuration.protocolVersions = versions.compactMap { UInt32(exactly: $0) }
                note("protocol-versions", versions.map(String.init).joined(separator: ","))
            }
        }
        if let name = string("log-level") {
            if let level = Logger.Level(rawValue: name) {
                configuration.logLevel = level
            } else {
                invalid("log-level", name, "use one of trace, debug, info, notice, warning, error, critical")
            }
        }
        if let name = string("log-format") {
            if let format = LogFormat(rawValue: name) {
                configuration.logFormat = format
            } else {
                invalid("log-format", name, "use text or json")
            }
        }
        configuration.slotCountInterval = seconds("slot-count-interval", default: 15)
        configuration.adminPort = integer("admin-port", default: nil)
        configuration.cacheTTL = seconds("cache-ttl", default: 2)
        let lead = number("rotation-lead", default: 30)
        let interval = seconds("rotation-interval", default: 5)
        if lead == 0 {
            configuration.rotation = nil
        } else {
            configuration.rotation?.leadTime = .milliseconds(Int64((lead * 1000).rounded()))
            configuration.rotation?.interval = interval
        }
        let window = number("prefetch-window", default: 60)
        let margin = number("prefetch-margin", default: 10)
        configuration.prefetchWindow = PrefetchWindow(
            windowMilliseconds: Int64((window * 1000).rounded()), marginMilliseconds: Int64((margin * 1000).rounded()))
        // The window is advertised from the prefetcher's schedules: asked for without them, it would
        // silently never appear in a reply.
        if window > 0, configuration.rotation == nil || configuration.cacheTTL == .zero,
            let setting = ServeSetting.byKey["prefetch-window"], let where_ = source(of: setting)
        {
            problems.append(
                .init(
                    .invalidValue, source: where_,
                    message:
                        "prefetch-window \(ServeSetting.NumberBounds.format(window)) needs rotation prefetch, which is off (rotation-lead 0 or cache-ttl 0): set prefetch-window 0, or turn the cache and rotation-lead on."
                ))
        }
        configuration.guardsEnabled = boolean("guards", default: true)
        configuration.replyTTLMilliseconds = Int64((number("reply-ttl", default: 900) * 1000).rounded())
        configuration.rateWindowMilliseconds = Int64(integer("rate-window-ms", default: 1000) ?? 1000)
        let waitReplicas = integer("redis-wait-replicas", default: 0) ?? 0
        let waitTimeout = integer("redis-wait-timeout-ms", default: 100) ?? 100
        configuration.redisDurability = waitReplicas > 0 ? RedisDurability(replicas: waitReplicas, timeout: .milliseconds(waitTimeout)) : nil
        resolveTracing(&configuration, defaultInstanceID: defaultInstanceID)
        configuration.report = report
        return configuration
    }

    /// Kafka's topic names: 1...249 of `[a-zA-Z0-9._-]`, not `.` or `..`. With class topics the
    /// requests topic's name grows by a class, and none of the topics read may be one written to.
    private mutating func checkTopics(_ worker: WorkerConfiguration) {
        func legal(_ name: String) -> Bool {
            !name.isEmpty && name.utf8.count <= 249 && name != "." && name != ".."
                && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }
        }
        let read = RequestTopics(requestsTopic: worker.requestsTopic, classTopics: worker.classTopics).all
        for (key, names) in [("requests-topic", read), ("replies-topic", [worker.repliesTopic]), ("dlq-topic", [worker.deadLetterTopic])] {
            guard let setting = ServeSetting.byKey[key], let bad = names.first(where: { !legal($0) }) else { continue }
            let where_ = source(of: setting) ?? key
            problems.append(
                .init(
                    .invalidValue, source: where_,
                    message:
                        "\(where_) makes the topic name \"\(bad)\", which Kafka refuses: use 1 to 249 letters, digits, '.', '_' or '-'\(key == "requests-topic" && worker.classTopics ? " (with class-topics the name also takes a class suffix such as .continuity)" : "")."
                ))
        }
        for (key, written) in [("replies-topic", worker.repliesTopic), ("dlq-topic", worker.deadLetterTopic)] where read.contains(written) {
            guard let setting = ServeSetting.byKey[key] else { continue }
            let where_ = source(of: setting) ?? key
            problems.append(
                .init(
                    .invalidValue, source: where_,
                    message:
                        "\(where_) is \"\(written)\", a topic the worker also reads requests from: its own output would come back as jobs; name another topic.")
            )
        }
    }

    private mutating func invalid(_ key: String, _ value: String, _ fix: String) {
        guard let setting = ServeSetting.byKey[key] else { return }
        let where_ = source(of: setting) ?? key
        problems.append(.init(.invalidValue, source: where_, message: "\(where_) is \"\(value)\", which \(key) does not accept: \(fix)."))
    }

    /// The OTLP exporter: checked here like every setting, then handed to ``OTLPTracingConfiguration``,
    /// which also reads the OpenTelemetry SDK's other variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...).
    private mutating func resolveTracing(_ configuration: inout ServeConfiguration, defaultInstanceID: String) {
        func flagOrFile(_ key: String, _ value: () -> Any?) -> Any? {
            guard let setting = ServeSetting.byKey[key], let from = source(of: setting), from != setting.environment else { return nil }
            return value()
        }
        let endpoint = string("otlp-endpoint")
        let timeout = integer("otlp-timeout-ms", default: nil)
        let delay = integer("otlp-schedule-delay-ms", default: nil)
        let ratioSetting = ServeSetting.byKey["trace-sample-ratio"]
        let hasRatio = ratioSetting.flatMap { source(of: $0) } != nil
        let ratio = hasRatio ? number("trace-sample-ratio", default: 1) : nil
        let serviceName = string("service-name")
        let headers = map("otlp-headers", readsEnvironment: false)
        let layer = OTLPTracingConfiguration.Settings(
            endpoint: flagOrFile("otlp-endpoint") { endpoint } as? String, headers: headers.isEmpty ? nil : headers,
            timeoutMilliseconds: flagOrFile("otlp-timeout-ms") { timeout } as? Int,
            scheduleDelayMilliseconds: flagOrFile("otlp-schedule-delay-ms") { delay } as? Int,
            sampleRatio: flagOrFile("trace-sample-ratio") { ratio } as? Double,
            serviceName: flagOrFile("service-name") { serviceName } as? String)
        do {
            // The layers are already merged above; the environment is passed for the SDK's other variables.
            let otlp = try OTLPTracingConfiguration.resolve(
                flags: layer, environment: environment, file: .init(),
                serviceInstanceID: configuration.worker.instanceID ?? defaultInstanceID)
            if configuration.worker.tracing { configuration.otlp = otlp } else { configuration.otlpWithoutTracing = otlp != nil }
        } catch {
            problems.append(.init(.invalidValue, source: "tracing", message: "Tracing: \(error.description)."))
        }
    }
}
