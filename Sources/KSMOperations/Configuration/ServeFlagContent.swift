import Configuration
import KSMService

/// A command-line value as swift-configuration content of its setting's type: the text a flag
/// carries is read as the environment's text would be (`--cache-ttl inf` is a number, out of range).
enum ServeFlagContent {
    /// Nil when the value is not of the kind's type.
    static func content(_ flag: ConfigFlagValue, for kind: ServeSetting.Kind) -> ConfigContent? {
        switch (kind, flag) {
        case (.string, .string(let s)), (.choice, .string(let s)): return .string(s)
        case (.integer, _): return wholeNumber(flag).map { .int($0) }
        case (.number, _): return number(flag).map { .double($0) }
        case (.duration(let bounds, _), _):
            return bounds.unit == .seconds ? number(flag).map { .double($0) } : wholeNumber(flag).map { .int($0) }
        case (.boolean, .boolean(let b)): return .bool(b)
        case (.boolean, .string(let s)): return Bool(s.lowercased()).map { .bool($0) }
        case (.integerList, .list(let items)):
            let ints = items.compactMap { Int($0) }
            return ints.count == items.count ? .intArray(ints) : nil
        case (.stringList, .list(let items)): return .stringArray(items)
        default: return nil
        }
    }

    private static func wholeNumber(_ flag: ConfigFlagValue) -> Int? {
        switch flag {
        case .integer(let i): i
        case .string(let s): Int(s)
        case .number(let d) where d == d.rounded() && abs(d) < 1e15: Int(d)
        default: nil
        }
    }

    private static func number(_ flag: ConfigFlagValue) -> Double? {
        switch flag {
        case .integer(let i): Double(i)
        case .number(let d): d
        case .string(let s): Double(s)
        default: nil
        }
    }
}
