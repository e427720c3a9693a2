import KSMService

extension ServeSetting {
    /// A duration as this setting is written: `15` (seconds) for 15 s, `100` (milliseconds) for 100 ms.
    func written(_ duration: Duration) -> String {
        if case .duration(let bounds, _) = kind { return bounds.format(duration) }
        return "\(duration)"
    }

    /// What a value must look like, and the default used when no source gives one.
    package enum Kind: Sendable {
        /// Text; `default` nil: none (required, or off).
        case string(default: String?)
        /// One of a fixed set of words.
        case choice([String], default: String)
        /// A whole number in the range.
        case integer(ClosedRange<Int>, default: Int?)
        /// A number (a ratio, a share) within the bounds.
        case number(NumberBounds, default: Double)
        /// A duration, written in the bounds' unit (seconds, or whole milliseconds).
        case duration(DurationBounds, default: Duration)
        case boolean(default: Bool)
        /// A list of whole numbers (JSON array; a comma-separated list in the environment; values after the flag).
        case integerList(ClosedRange<Int>)
        /// A list of strings (JSON array; a comma-separated list in the environment; a repeatable flag).
        case stringList
        /// A JSON object in the file; `KEY=VALUE` pairs on the command line and in the environment.
        case map(MapValues)

        var isBoolean: Bool {
            if case .boolean = self { return true }
            return false
        }

        /// The default as `--help` and `--check-config` show it, in the setting's unit.
        var defaultText: String? {
            switch self {
            case .string(let value): value
            case .choice(_, let value): value
            case .integer(_, let value): value.map(String.init)
            case .number(_, let value): NumberBounds.format(value)
            case .duration(let bounds, let value): bounds.format(value)
            case .boolean(let value): String(value)
            case .integerList, .stringList, .map: nil
            }
        }

        /// What would be accepted, for messages: "a whole number from 1 to 65535".
        var expectation: String {
            switch self {
            case .string: "a string"
            case .choice(let words, _): "one of " + words.joined(separator: ", ")
            case .integer(let range, _): "a whole number from \(range.lowerBound) to \(range.upperBound)"
            case .number(let bounds, _): "a number \(bounds.sentence)"
            case .duration(let bounds, _): bounds.expectation
            case .boolean: "true or false"
            case .integerList: "an array of whole numbers"
            case .stringList: "an array of strings"
            case .map(.strings): "an object whose values are strings"
            case .map(.librdkafkaProperties): "an object of librdkafka properties (strings, numbers or booleans)"
            case .map(.positiveNumbers): "an object whose values are positive numbers"
            }
        }

        /// The shape of a value in `--help`: `<seconds>`, `<n>`, `<KEY=VALUE>`.
        var placeholder: String {
            switch self {
            case .string, .choice, .stringList: "<value>"
            case .integer, .integerList: "<n>"
            case .number: "<number>"
            case .duration(let bounds, _): bounds.unit == .seconds ? "<seconds>" : "<milliseconds>"
            case .boolean: ""
            case .map: "<KEY=VALUE>"
            }
        }
    }

    /// What the values of a map setting must be.
    package enum MapValues: Sendable {
        /// Strings only (file paths, header values).
        case strings
        /// librdkafka properties: strings, and numbers or booleans written as librdkafka's strings.
        case librdkafkaProperties
        /// Positive numbers.
        case positiveNumbers
    }
}
