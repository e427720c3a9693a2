/// A JSON document as a typed tree, so envelope and policy decoders can say exactly which field has
/// which wrong type (Codable's synthesized errors cannot tell a missing field from a null one, nor
/// say "integer" vs "number" the way the schemas do).
///
/// Read with ``init(parsing:maximumDepth:)`` (``JSONParser``: strict RFC 8259, duplicate keys
/// refused) and written with ``encoded()`` (``JSONWriter``: compact, keys sorted by UTF-8 bytes).
/// Both work on bytes directly: jobs and replies are on the hot path of every license.
/// Integers that fit `Int64` read as ``integer``; every other number as ``number``.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses one JSON document (surrounding white space allowed, nothing else after it).
    package init(parsing bytes: some Collection<UInt8>, maximumDepth: Int = JSONParser.defaultMaximumDepth) throws(JSONParser.Error) {
        self = try JSONParser.parse(bytes, maximumDepth: maximumDepth)
    }

    /// The JSON Schema type name, for error messages.
    package var kind: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer: "integer"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// Compact JSON with keys sorted by their UTF-8 bytes and unescaped slashes.
    package func encoded() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }
}
