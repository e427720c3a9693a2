import Foundation
import KSMService
import Wire

/// Map settings (`kek`, `kafka-properties`, `kafka-property-files`, `tenant-weights`, `otlp-headers`):
/// the file's object, then the environment's pairs, then the flags' pairs, merged entry by entry.
extension ServeConfigurationResolver {
    /// How a map setting uses its environment variable.
    enum EnvironmentUse {
        /// Its pairs are merged between the file's and the flags'.
        case merged
        /// Another reader takes the variable with its own rules (the OpenTelemetry SDK's
        /// `OTEL_EXPORTER_OTLP_HEADERS`): its pairs are shown by `--check-config`, not returned.
        case reportedOnly
    }

    /// The merged entries. A file object with one value of the wrong type is refused whole, naming
    /// that entry: never half-read.
    mutating func map(_ setting: ServeSetting, environment use: EnvironmentUse = .merged) -> [String: String] {
        guard case .map(let values) = setting.kind else {
            assertionFailure("\(setting.key) is not a map")
            return [:]
        }
        var result = fileEntries(setting, values)
        var shown = result
        // A value that may be part of a secret (a librdkafka password cut at a separator) is never quoted.
        let quoted = !(setting.isSecret || values == .librdkafkaProperties)
        if let text = sources.environment[setting.environment] {
            for item in text.split(separator: values.environmentSeparator) {
                let entry = item.trimmingCharacters(in: .whitespaces)
                guard !entry.isEmpty else { continue }
                switch use {
                case .merged:
                    if let (name, value) = pair(entry, setting.environment, quoted: quoted) { result[name] = value }
                case .reportedOnly:
                    if let eq = entry.firstIndex(of: "="), eq != entry.startIndex { shown[String(entry[..<eq])] = String(entry[entry.index(after: eq)...]) }
                }
            }
        }
        if case .list(let items) = sources.flags[setting.key] {
            for item in items { if let (name, value) = pair(item, setting.flagName ?? setting.key, quoted: quoted) { result[name] = value } }
        }
        if values == .positiveNumbers { result = positiveNumbers(result, setting) }
        shown.merge(result) { _, merged in merged }
        if !shown.isEmpty {
            let lines = shown.sorted { $0.key < $1.key }.map { name, value in
                let hidden = setting.isSecret || (values == .librdkafkaProperties && Redaction.isSecretKafkaProperty(name))
                return "\(name)=\(hidden ? Redaction.placeholder : value)"
            }
            note(setting, map: lines.joined(separator: ", "))
        }
        return result
    }

    /// The file's object as strings; empty, with a problem per bad entry, when an entry is of the wrong type.
    private mutating func fileEntries(_ setting: ServeSetting, _ values: ServeSetting.MapValues) -> [String: String] {
        guard case .object(let members) = sources.file.members[setting.key] else { return [:] }
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
                let shown = setting.isSecret ? "a value (not shown: it is secret)" : ServeConfigFile.describe(member)
                problem(
                    .wrongType, "\"\(setting.key)\".\"\(name)\" in \(sources.file.name)",
                    "\"\(name)\" under \"\(setting.key)\" in the config file \(sources.file.path ?? "") is \(shown); \"\(setting.key)\" must be \(setting.kind.expectation). The whole \"\(setting.key)\" object is refused."
                )
                continue
            }
            entries[name] = text
        }
        return bad ? [:] : entries
    }

    /// The entries whose values are positive numbers; a problem for each other one.
    private mutating func positiveNumbers(_ entries: [String: String], _ setting: ServeSetting) -> [String: String] {
        var result = entries
        for (name, text) in entries.sorted(by: { $0.key < $1.key }) {
            guard let weight = Double(text), weight > 0, weight.isFinite else {
                let location = setting.flagName ?? setting.key
                problem(.outOfRange, location, "\(location) \(name)=\(text): the weight must be a positive number.")
                result[name] = nil
                continue
            }
        }
        return result
    }

    /// `KEY=VALUE` split at the first `=`; nil, with a problem noted, when there is no key.
    /// - Parameter quoted: false where the text may be part of a secret: the problem then names the
    ///   entry without showing it.
    private mutating func pair(_ text: String, _ location: String, quoted: Bool) -> (String, String)? {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            let shown = quoted ? "\"\(text)\"" : "an entry (not shown: it may hold a secret)"
            let secretAdvice = quoted ? "" : ", and give a secret as a file (--kafka-property-file NAME=PATH)"
            problem(.invalidValue, location, "\(location) takes KEY=VALUE pairs; \(shown) has no key: write it as KEY=VALUE\(secretAdvice).")
            return nil
        }
        return (String(text[..<eq]), String(text[text.index(after: eq)...]))
    }
}
