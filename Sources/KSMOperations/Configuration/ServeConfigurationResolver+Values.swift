import Configuration
import KSMService

/// Typed reads: each takes the setting's default, bounds and unit from its declaration, refuses a
/// value outside the bounds by name, and notes the value in effect for `--check-config`.
extension ServeConfigurationResolver {
    /// The text given, or the declared default; nil when neither. Secrets are noted redacted.
    mutating func string(_ setting: ServeSetting) -> String? {
        guard let value = read(setting, { try $0.requiredString(forKey: $1, isSecret: setting.isSecret) }) else {
            if case .string(let fallback?) = setting.kind { note(setting, fallback, isDefault: true) }
            if case .string(let fallback) = setting.kind { return fallback }
            return nil
        }
        note(setting, setting.isSecret ? Redaction.redactedURL(value) : value)
        return value
    }

    /// One of the declared words: the value given if it is one (else a problem), or the default.
    mutating func choice(_ setting: ServeSetting) -> String {
        guard case .choice(let words, let fallback) = setting.kind else {
            assertionFailure("\(setting.key) is not a choice")
            return ""
        }
        guard let value = read(setting, { try $0.requiredString(forKey: $1) }) else {
            note(setting, fallback, isDefault: true)
            return fallback
        }
        guard words.contains(value) else {
            invalid(setting, value, "use \(words.count == 2 ? words.joined(separator: " or ") : "one of " + words.joined(separator: ", "))")
            return fallback
        }
        note(setting, value)
        return value
    }

    /// The whole number given if it is in range (else a problem), or the declared default.
    mutating func integer(_ setting: ServeSetting, default derived: Int? = nil) -> Int? {
        guard case .integer(let range, let declared) = setting.kind else {
            assertionFailure("\(setting.key) is not an integer")
            return nil
        }
        let fallback = declared ?? derived
        guard let value = read(setting, { try $0.requiredInt(forKey: $1) }) else {
            if let fallback { note(setting, String(fallback), isDefault: true) }
            return fallback
        }
        guard range.contains(value) else {
            rangeProblem(setting, String(value))
            return fallback
        }
        note(setting, String(value))
        return value
    }

    /// The number given if it is within bounds (else a problem), or the declared default.
    mutating func number(_ setting: ServeSetting) -> Double {
        guard case .number(let bounds, let fallback) = setting.kind else {
            assertionFailure("\(setting.key) is not a number")
            return 0
        }
        guard let value = read(setting, { try $0.requiredDouble(forKey: $1) }) else {
            note(setting, ServeSetting.NumberBounds.format(fallback), isDefault: true)
            return fallback
        }
        guard bounds.contains(value) else {
            rangeProblem(setting, String(value))
            return fallback
        }
        note(setting, ServeSetting.NumberBounds.format(value))
        return value
    }

    /// The duration given, in the setting's unit, if it is within bounds (else a problem), or the declared default.
    mutating func duration(_ setting: ServeSetting) -> Duration {
        guard case .duration(let bounds, let fallback) = setting.kind else {
            assertionFailure("\(setting.key) is not a duration")
            return .zero
        }
        let given: Double? =
            switch bounds.unit {
            case .seconds: read(setting) { try $0.requiredDouble(forKey: $1) }
            case .milliseconds: read(setting) { try $0.requiredInt(forKey: $1) }.map(Double.init)
            }
        guard let given else {
            note(setting, bounds.format(fallback), isDefault: true)
            return fallback
        }
        guard bounds.numbers.contains(given) else {
            rangeProblem(setting, bounds.unit == .seconds ? String(given) : ServeSetting.NumberBounds.format(given))
            return fallback
        }
        note(setting, ServeSetting.NumberBounds.format(given))
        return bounds.duration(given)
    }

    /// True or false as given, or the declared default.
    mutating func boolean(_ setting: ServeSetting) -> Bool {
        guard case .boolean(let fallback) = setting.kind else {
            assertionFailure("\(setting.key) is not a boolean")
            return false
        }
        let value = read(setting) { try $0.requiredBool(forKey: $1) }
        note(setting, String(value ?? fallback), isDefault: value == nil)
        return value ?? fallback
    }

    /// The whole numbers given, each in range (else a problem and nil); nil when none are given.
    mutating func integers(_ setting: ServeSetting) -> [Int]? {
        guard case .integerList(let range) = setting.kind, let values = read(setting, { try $0.requiredIntArray(forKey: $1) }) else { return nil }
        if let bad = values.first(where: { !range.contains($0) }) {
            rangeProblem(setting, String(bad))
            return nil
        }
        note(setting, values.map(String.init).joined(separator: ","))
        return values
    }

    /// The strings given, or nil when none are; noted by the caller, which may normalise them.
    mutating func strings(_ setting: ServeSetting) -> [String]? {
        read(setting) { try $0.requiredStringArray(forKey: $1) }
    }
}
