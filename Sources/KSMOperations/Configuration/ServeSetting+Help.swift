import KSMService

extension ServeSetting {
    /// The help sentences with the default and the environment variable appended:
    /// "Admin port for /healthz, /readyz and /metrics. Default: off. Environment: KSM_ADMIN_PORT."
    package var helpSentences: String {
        var text = help
        if let defaultText { text += " Default: \(defaultText)." }
        switch (flag, kind) {
        case (.setsFalse, _): text += " Environment: \(environment)=false."
        case (_, .map(let values)): text += " Environment: \(environment), \(values.environmentSeparatorName)-separated."
        case (_, .integerList), (_, .stringList): text += " Environment: \(environment), comma-separated."
        default: text += " Environment: \(environment)."
        }
        return text
    }

    /// How the flag is written in `--help`: `--admin-port <n>`, `--no-guards`; nil without a flag.
    package var flagUsage: String? {
        guard let flagName else { return nil }
        switch flag {
        case .option:
            let value = kind.placeholder + (Self.isRepeatable(kind) ? " ..." : "")
            return "\(flagName) \(value)"
        case .none, .setsTrue, .setsFalse: return flagName
        }
    }

    private static func isRepeatable(_ kind: Kind) -> Bool {
        switch kind {
        case .integerList, .stringList, .map: true
        default: false
        }
    }

    /// The `--help` text of every setting: each flag on a line of its own, its help, default and
    /// environment variable indented below, wrapped to `width` columns; then the settings only the
    /// config file and the environment set. Below 80 columns: swift-argument-parser wraps the
    /// discussion again at 80 columns on a terminal it cannot measure, and breaks a line of exactly 80.
    package static func helpText(width: Int = 79) -> String {
        var lines: [String] = ["SETTINGS (flags win over the environment, which wins over the config file):"]
        for setting in [config] + all {
            guard let usage = setting.flagUsage else { continue }
            lines.append("  " + usage)
            lines += wrap(setting.helpSentences, width: width, indent: 8)
        }
        let fileOnly = all.filter { $0.flagName == nil }
        if !fileOnly.isEmpty {
            lines.append("")
            lines.append("SETTINGS WITHOUT A FLAG (config file key, environment variable):")
            for setting in fileOnly {
                lines.append("  \(setting.key)")
                lines += wrap(setting.helpSentences, width: width, indent: 8)
            }
        }
        return lines.joined(separator: "\n")
    }

    /// Words of `text` in lines of at most `width` columns (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int, indent: Int) -> [String] {
        let margin = String(repeating: " ", count: indent)
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, indent + line.count + 1 + word.count > width {
                lines.append(margin + line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        if !line.isEmpty { lines.append(margin + line) }
        return lines
    }
}

extension ServeSetting.MapValues {
    /// What separates `KEY=VALUE` pairs in the environment: librdkafka values may hold commas
    /// (debug contexts, lists), so its properties are separated with `;`.
    var environmentSeparator: Character { self == .librdkafkaProperties ? ";" : "," }

    var environmentSeparatorName: String { self == .librdkafkaProperties ? "semicolon" : "comma" }
}
