import FairPlay

/// What a policy does with a client in a riskier situation: playing through AirPlay, through
/// Apple's digital AV adapter, or inside a virtual machine.
///
/// JSON: `"allow"`, `"deny"`, `"cap-baseline"` or `"cap-audio"`. A cap lowers the level the client
/// is trusted with, so content that needs more (uhd needs Main) is refused while the rest plays.
package enum ClientRestriction: Hashable, Sendable, CustomStringConvertible {
    /// The situation changes nothing.
    case allow
    /// Refuse the license outright.
    case deny
    /// Trust the client with at most this level.
    case cap(SecurityLevel)

    /// Reads the JSON spelling; nil for anything else.
    package init?(jsonName: String) {
        switch jsonName {
        case "allow": self = .allow
        case "deny": self = .deny
        case "cap-baseline": self = .cap(.baseline)
        case "cap-audio": self = .cap(.audio)
        default: return nil
        }
    }

    /// The JSON spelling.
    package var jsonName: String {
        switch self {
        case .allow: "allow"
        case .deny: "deny"
        case .cap(let level): "cap-\(level.name)"
        }
    }

    package var description: String { jsonName }
}
