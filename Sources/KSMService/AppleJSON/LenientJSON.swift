import Foundation

/// Reads JSON the way Apple's sample inputs need: trailing commas before `}` or `]` are allowed.
///
/// Apple's reference tool reads its inputs with a JSON5-tolerant parser and its samples rely on it.
/// Only trailing commas are relaxed; everything else is strict JSON.
public enum LenientJSON {
    public struct InvalidJSON: Error, CustomStringConvertible {
        public let reason: String
        public var description: String { "invalid JSON: \(reason)" }
    }

    /// Parses bytes into Foundation JSON objects.
    public static func parse(_ bytes: [UInt8]) throws(InvalidJSON) -> Any {
        let cleaned = stripTrailingCommas(bytes)
        do {
            return try JSONSerialization.jsonObject(with: Data(cleaned), options: [.fragmentsAllowed])
        } catch {
            throw InvalidJSON(reason: (error as NSError).localizedDescription)
        }
    }

    /// Removes each comma whose next non-space character closes an object or array, outside strings.
    static func stripTrailingCommas(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(input.count)
        var inString = false
        var escaped = false
        var i = 0
        while i < input.count {
            let c = input[i]
            if inString {
                out.append(c)
                if escaped { escaped = false } else if c == UInt8(ascii: "\\") { escaped = true } else if c == UInt8(ascii: "\"") { inString = false }
                i += 1
                continue
            }
            if c == UInt8(ascii: "\"") { inString = true }
            if c == UInt8(ascii: ",") {
                var j = i + 1
                while j < input.count, [UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains(input[j]) { j += 1 }
                if j < input.count, input[j] == UInt8(ascii: "}") || input[j] == UInt8(ascii: "]") {
                    i += 1
                    continue
                }
            }
            out.append(c)
            i += 1
        }
        return out
    }
}
