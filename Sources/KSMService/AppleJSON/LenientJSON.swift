import Foundation
import Licensing
import Wire

/// Reads JSON the way Apple's sample inputs need: trailing commas before `}` or `]` are allowed.
///
/// Apple's reference tool reads its inputs with a JSON5-tolerant parser and its samples rely on it.
/// Only trailing commas are relaxed (``JSONParser``'s `allowingTrailingCommas`); everything else is
/// the project's strict JSON, duplicate keys refused.
public enum LenientJSON {
    public struct InvalidJSON: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "invalid JSON: \(reason)" }
    }

    /// Parses bytes into a ``JSONValue``.
    public static func value(_ bytes: [UInt8]) throws(InvalidJSON) -> JSONValue {
        do {
            return try JSONParser.parse(bytes, allowingTrailingCommas: true)
        } catch {
            throw InvalidJSON(reason: error.description)
        }
    }

    /// Parses bytes into Foundation JSON objects (``foundationObject(_:)``).
    public static func parse(_ bytes: [UInt8]) throws(InvalidJSON) -> Any {
        foundationObject(try value(bytes))
    }

    /// `value` in the shapes `JSONSerialization` gives: numbers and booleans as `NSNumber` (so
    /// `as? Int`, `as? Bool` and `as? Double` convert as they always did: `1` reads as `true`, `120.0`
    /// as `120`), strings as `String`, `[Any]`, `[String: Any]` and `NSNull`.
    public static func foundationObject(_ value: JSONValue) -> Any {
        switch value {
        case .null: NSNull()
        case .bool(let b): NSNumber(value: b)
        case .integer(let i): NSNumber(value: i)
        case .number(let d): NSNumber(value: d)
        case .string(let s): s
        case .array(let elements): elements.map(foundationObject)
        case .object(let members): members.mapValues(foundationObject)
        }
    }
}
