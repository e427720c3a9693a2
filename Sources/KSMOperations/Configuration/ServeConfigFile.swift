import Configuration
import Foundation
import KSMService
import Wire

/// `ksm serve`'s JSON config file, read and checked: one object whose keys are settings' keys.
///
/// The file is parsed and checked here, not by swift-configuration's `FileProvider<JSONSnapshot>`:
/// the library ignores keys nobody reads (so `redsi-url` would pass silently), flattens objects into
/// dotted keys (librdkafka's `security.protocol` inside `kafka-properties` would become two levels)
/// and cannot list a map's entries. Its checked scalars go to the reader as an `InMemoryProvider`.
struct ServeConfigFile {
    /// The path given; nil: no config file.
    let path: String?
    /// The top-level members still usable: unknown keys and values of the wrong type are taken out.
    private(set) var members: [String: JSONValue] = [:]
    private(set) var problems: [ConfigurationProblem] = []
    /// Keys refused for their type: reported once, and not reported again as missing.
    private(set) var refused: Set<String> = []

    init(path: String?) {
        self.path = path
        guard let path else { return }
        guard let data = FileManager.default.contents(atPath: path) else {
            problems.append(
                .init(
                    .unreadableFile, source: path,
                    message: "Cannot read the config file \(path): check the path given to --config or KSM_CONFIG and that this user may read it."))
            return
        }
        let value: JSONValue
        do {
            value = try LenientJSON.value(Array(data))
        } catch {
            problems.append(
                .init(
                    .unreadableFile, source: path,
                    message:
                        "The config file \(path) is not valid JSON (\(error.reason)): fix the syntax, or run ksm serve --check-config to see every problem."))
            return
        }
        guard case .object(let members) = value else {
            problems.append(
                .init(
                    .wrongType, source: path,
                    message: "The config file \(path) must hold one JSON object whose keys are the long flags' names, e.g. {\"brokers\": \"kafka:9092\"}."))
            return
        }
        for key in members.keys.sorted() where ServeSetting.byKey[key] == nil {
            let suggestion = Self.closest(to: key, among: ServeSetting.all.map(\.key)).map { " Did you mean \"\($0)\"?" } ?? ""
            problems.append(
                .init(
                    .unknownKey, source: "\"\(key)\" in \(name)",
                    message: "Unknown key \"\(key)\" in the config file \(path).\(suggestion) Keys are the long flags' names; see ksm serve --help."))
        }
        self.members = members.filter { ServeSetting.byKey[$0.key] != nil }
    }

    /// The file's name for messages: `ksm.json`.
    var name: String { path.map { ($0 as NSString).lastPathComponent } ?? "the config file" }

    /// Where a key was written, for messages: `"admin-port" in ksm.json`.
    func source(_ key: String) -> String { "\"\(key)\" in \(name)" }

    /// The file's scalar and list values, checked against each setting's JSON type, for the file
    /// provider; a value of the wrong type is refused with a problem. Maps are merged by the resolver.
    mutating func checkedValues() -> [AbsoluteConfigKey: ConfigValue] {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for (key, json) in members.sorted(by: { $0.key < $1.key }) {
            guard let setting = ServeSetting.byKey[key] else { continue }
            if case .map = setting.kind {
                guard case .object = json else {
                    refuse(key, json, setting)
                    continue
                }
                continue
            }
            guard let content = Self.content(json, for: setting.kind) else {
                refuse(key, json, setting)
                continue
            }
            values[AbsoluteConfigKey([key])] = ConfigValue(content, isSecret: setting.isSecret)
        }
        return values
    }

    private mutating func refuse(_ key: String, _ json: JSONValue, _ setting: ServeSetting) {
        refused.insert(key)
        members[key] = nil
        let shown = setting.isSecret ? "a value (not shown: it is secret)" : Self.describe(json)
        problems.append(
            .init(
                .wrongType, source: source(key),
                message: "\"\(key)\" in the config file \(path ?? "") is \(shown); it must be \(setting.kind.expectation)."))
    }

    /// The JSON value as swift-configuration content of the kind's type; nil when it is of another type.
    static func content(_ json: JSONValue, for kind: ServeSetting.Kind) -> ConfigContent? {
        switch (kind, json) {
        case (.string, .string(let s)), (.choice, .string(let s)): return .string(s)
        case (.integer, .integer(let i)): return Int(exactly: i).map { .int($0) }
        case (.integer, .number(let d)) where d == d.rounded() && abs(d) < 1e15: return .int(Int(d))
        case (.number, .integer(let i)): return .double(Double(i))
        case (.number, .number(let d)): return .double(d)
        case (.duration(let bounds, _), .integer(let i)): return bounds.unit == .seconds ? .double(Double(i)) : Int(exactly: i).map { .int($0) }
        case (.duration(let bounds, _), .number(let d)):
            if bounds.unit == .seconds { return .double(d) }
            return d == d.rounded() && abs(d) < 1e15 ? .int(Int(d)) : nil
        case (.boolean, .bool(let b)): return .bool(b)
        case (.integerList, .array(let elements)):
            let ints = elements.compactMap { element -> Int? in
                if case .integer(let i) = element { return Int(exactly: i) }
                return nil
            }
            return ints.count == elements.count ? .intArray(ints) : nil
        case (.stringList, .array(let elements)):
            let strings = elements.compactMap { element -> String? in
                if case .string(let s) = element { return s }
                return nil
            }
            return strings.count == elements.count ? .stringArray(strings) : nil
        default: return nil
        }
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

    /// The candidate with the smallest edit distance, if it is close (a typo, not another word).
    static func closest(to key: String, among candidates: [String]) -> String? {
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
        let best = candidates.sorted().map { ($0, distance(Array(key), Array($0))) }.min { $0.1 < $1.1 }
        guard let best, best.1 <= max(2, key.count / 4) else { return nil }
        return best.0
    }
}
