import KSMService

/// The three places a `ksm serve` setting may be written, and which of them a setting's value
/// comes from: the first that has it, flags before the environment before the config file.
struct ServeSettingSources {
    /// The flags given, by config-file key; a flag refused for its type is taken out.
    var flags: [String: ConfigFlagValue]
    let environment: [String: String]
    var file: ServeConfigFile

    /// Where the value in effect comes from: `--admin-port`, `KSM_ADMIN_PORT`, `"admin-port" in ksm.json`;
    /// nil when no layer has it.
    func source(of setting: ServeSetting) -> String? {
        if flags[setting.key] != nil { return setting.flagName ?? setting.key }
        if environment[setting.environment] != nil { return setting.environment }
        if file.members[setting.key] != nil { return file.source(setting.key) }
        return nil
    }

    /// Every layer a map setting's entries come from, lowest first: `"kek" in ksm.json + KSM_KEK_FILES`.
    func sourcesOfMap(_ setting: ServeSetting) -> String {
        var layers: [String] = []
        if file.members[setting.key] != nil { layers.append(file.source(setting.key)) }
        if environment[setting.environment] != nil { layers.append(setting.environment) }
        if flags[setting.key] != nil { layers.append(setting.flagName ?? setting.key) }
        return layers.joined(separator: " + ")
    }

    /// The value in effect as written, for a message about a setting that is not secret.
    func written(_ setting: ServeSetting) -> String {
        if let flag = flags[setting.key] { return flag.text }
        if let value = environment[setting.environment] { return value }
        if let json = file.members[setting.key] { return ServeConfigFile.describe(json) }
        return ""
    }

    /// The `config` line of `--check-config`: the file and what named it.
    var configLine: ServeConfiguration.ResolvedSetting? {
        guard let path = file.path else { return nil }
        return .init(key: ServeSetting.config.key, value: path, source: flags[ServeSetting.config.key] != nil ? "--config" : ServeSetting.config.environment)
    }
}
