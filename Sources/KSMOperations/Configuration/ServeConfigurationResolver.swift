import Configuration
import KSMService

/// Resolves ``ServeConfiguration`` from three layers, collecting every problem on the way.
///
/// Scalars are read through swift-configuration: a `ConfigReader` over an `InMemoryProvider` of the
/// checked flags, the process environment (`EnvironmentVariablesProvider`, its keys mapped to each
/// setting's variable by a `KeyMappingProvider`) and an `InMemoryProvider` of the config file's
/// checked values (``ServeConfigFile``). Maps are merged entry by entry, file then environment then
/// flags (``map(_:)``). Each typed read takes its default, bounds and unit from the setting's
/// declaration and notes the value for `--check-config`; the sections (`+Kafka`, `+Worker`,
/// `+Observability`) put the values into the configuration.
struct ServeConfigurationResolver {
    var sources: ServeSettingSources
    private(set) var problems: [ConfigurationProblem] = []
    /// Keys refused for their type at some layer: reported once, and not reported again as missing.
    private(set) var refused: Set<String> = []
    private(set) var report: [ServeConfiguration.ResolvedSetting] = []
    /// Replaced in ``resolve(defaultInstanceID:)`` once the layers are checked; the library needs one provider.
    private var reader = ConfigReader(providers: [InMemoryProvider(values: [:])])

    init(flags: [String: ConfigFlagValue], environment: [String: String], configFile: String?) {
        sources = ServeSettingSources(flags: flags, environment: environment, file: ServeConfigFile(path: configFile))
    }

    // MARK: - The whole configuration

    mutating func resolve(defaultInstanceID: String) -> ServeConfiguration {
        let fileValues = sources.file.checkedValues()
        problems += sources.file.problems
        refused = sources.file.refused
        let keyMapping = Dictionary(uniqueKeysWithValues: ServeSetting.all.map { ($0.key, $0.environment) })
        let secretVariables = Set(ServeSetting.all.filter(\.isSecret).map(\.environment))
        reader = ConfigReader(providers: [
            InMemoryProvider(name: "flags", values: checkedFlags()),
            KeyMappingProvider(
                upstream: EnvironmentVariablesProvider(environmentVariables: sources.environment, secretsSpecifier: .specific(secretVariables)),
                keyMapper: { key in AbsoluteConfigKey([keyMapping[key.components.joined(separator: ".")] ?? "KSM_UNMAPPED"]) }),
            InMemoryProvider(name: "file", values: fileValues),
        ])
        if let line = sources.configLine { report.append(line) }

        var configuration = ServeConfiguration(
            worker: kafka(), redisURL: redisURL() ?? "", credentials: string(.credentials) ?? "",
            cryptoThreads: 1)
        configuration.redisDurability = redisDurability()
        for setting in ServeSetting.all where setting.isRequired { checkGiven(setting) }
        resolveWorker(&configuration)
        resolveCredentials(&configuration)
        resolveStore(&configuration)
        resolveObservability(&configuration, defaultInstanceID: defaultInstanceID)
        // In the declarations' order, whatever order the sections read them in.
        let order = Dictionary(uniqueKeysWithValues: ([ServeSetting.config] + ServeSetting.all).enumerated().map { ($1.key, $0) })
        configuration.report = report.enumerated().sorted { (order[$0.element.key] ?? 0, $0.offset) < (order[$1.element.key] ?? 0, $1.offset) }.map(\.element)
        return configuration
    }

    /// A required setting given nowhere (and not already refused for its type) is a problem.
    private mutating func checkGiven(_ setting: ServeSetting) {
        guard sources.source(of: setting) == nil, !refused.contains(setting.key) else { return }
        let flag = setting.flagName.map { "pass \($0), " } ?? ""
        problems.append(
            .init(
                .missing, source: setting.flagName ?? setting.key,
                message: "No \(setting.key) given: \(flag)set \(setting.environment), or add \"\(setting.key)\" to the config file."))
    }

    /// The flags, each checked against its setting's kind; a flag that is not is a problem and taken out.
    private mutating func checkedFlags() -> [AbsoluteConfigKey: ConfigValue] {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, flag) in sources.flags.sorted(by: { $0.key < $1.key }) {
            guard let setting = ServeSetting.byKey[key] else { continue }
            if case .map = setting.kind { continue }
            guard let content = ServeFlagContent.content(flag, for: setting.kind) else {
                typeProblem(setting)
                refused.insert(key)
                sources.flags[key] = nil
                continue
            }
            values[AbsoluteConfigKey([key])] = ConfigValue(content, isSecret: setting.isSecret)
        }
        return values
    }

    // MARK: - Problems and the report

    mutating func problem(_ kind: ConfigurationProblem.Kind, _ source: String, _ message: String) {
        problems.append(ConfigurationProblem(kind, source: source, message: message))
    }

    /// Where a setting's value comes from, for a message; its key when it comes from its default.
    func whereWritten(_ setting: ServeSetting) -> String { sources.source(of: setting) ?? setting.key }

    mutating func typeProblem(_ setting: ServeSetting) {
        let location = whereWritten(setting)
        let shown = setting.isSecret ? "(hidden)" : "\"\(sources.written(setting))\""
        let expected = setting.kind.expectation
        problem(.wrongType, location, "\(location) is \(shown), which is not \(expected): set it to \(expected) or remove it.")
    }

    mutating func rangeProblem(_ setting: ServeSetting, _ shown: String) {
        let location = whereWritten(setting)
        problem(.outOfRange, location, "\(location) is \(shown), out of range: it must be \(setting.kind.expectation).")
    }

    /// A value of the right type that the setting still does not accept; `fix` says what would be.
    mutating func invalid(_ setting: ServeSetting, _ value: String, _ fix: String) {
        let location = whereWritten(setting)
        let shown = setting.isSecret ? "a value (not shown: it is secret)" : "\"\(value)\""
        problem(.invalidValue, location, "\(location) is \(shown), which \(setting.key) does not accept: \(fix).")
    }

    /// Notes the value for `--check-config`, from its source or as the default.
    mutating func note(_ setting: ServeSetting, _ value: String, isDefault: Bool = false) {
        let source = isDefault ? "default" : sources.source(of: setting) ?? "default"
        report.append(.init(key: setting.key, value: value, source: source))
    }

    mutating func note(_ setting: ServeSetting, map value: String) {
        report.append(.init(key: setting.key, value: value, source: sources.sourcesOfMap(setting)))
    }

    // MARK: - Reading one value

    /// The value in effect, read through the layers; nil when no layer has it, or (with a problem
    /// noted) when the library could not convert it.
    mutating func read<T>(_ setting: ServeSetting, _ get: (ConfigReader, ConfigKey) throws -> T) -> T? {
        guard sources.source(of: setting) != nil else { return nil }
        do {
            return try get(reader, ConfigKey([setting.key]))
        } catch {
            typeProblem(setting)
            refused.insert(setting.key)
            return nil
        }
    }
}
