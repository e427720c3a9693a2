import KSMService

/// A value from the command line, before it is checked against its setting.
///
/// ``ServeCommandLine`` gives every scalar as ``string(_:)``, the text as written, which the resolver
/// reads like an environment variable's; callers that build flags in code may give typed values.
package enum ConfigFlagValue: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case number(Double)
    case boolean(Bool)
    /// Repeatable flags: `--kek ID=PATH`, `--kafka-property K=V`, `--tenant-weight T=W`, `--protocol-versions`.
    case list([String])

    /// The value as written, for messages about a setting that is not secret.
    var text: String {
        switch self {
        case .string(let s): s
        case .integer(let i): String(i)
        case .number(let d): String(d)
        case .boolean(let b): String(b)
        case .list(let l): l.joined(separator: ",")
        }
    }
}
