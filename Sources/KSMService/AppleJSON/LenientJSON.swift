import Licensing
import Wire

/// Reads JSON the way Apple's sample inputs need: trailing commas before `}` or `]` are allowed.
///
/// Apple's reference tool reads its inputs with a JSON5-tolerant parser and its samples rely on it.
/// Only trailing commas are relaxed (``JSONParser``'s `allowingTrailingCommas`); everything else is
/// the project's strict JSON, duplicate keys refused.
package enum LenientJSON {
    package struct InvalidJSON: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { "invalid JSON: \(reason)" }
    }

    /// Parses bytes into a ``JSONValue``.
    package static func value(_ bytes: [UInt8]) throws(InvalidJSON) -> JSONValue {
        do {
            return try JSONParser.parse(bytes, allowingTrailingCommas: true)
        } catch {
            throw InvalidJSON(reason: error.description)
        }
    }
}
