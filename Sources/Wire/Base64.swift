import ExtrasBase64

/// Standard base64 (RFC 4648, section 4, padded) as the job and reply schemas define it, on
/// swift-extras-base64.
///
/// The library does the work (it is faster than `Data(base64Encoded:)`, and than the hand-written
/// codec this replaced: docs/performance.md, "Base64"); this type holds the schema's rule on top.
/// Decoding is as strict as the job schema: the standard alphabet, padding required, `=` only at the
/// end, no white space. Like Foundation, non-zero bits in the last symbol before the padding are
/// ignored rather than refused.
package enum Base64 {
    /// The padded base64 text of `bytes`.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        ExtrasBase64.Base64.encodeToString(bytes: bytes)
    }

    /// Appends the padded base64 of `bytes` to `output` (for writers that build a larger buffer).
    package static func append(_ bytes: [UInt8], to output: inout [UInt8]) {
        output += ExtrasBase64.Base64.encodeToBytes(bytes: bytes)
    }

    /// The bytes of padded base64 `text`, or nil if it is not exactly that.
    package static func decode(_ text: String) -> [UInt8]? {
        decode(text.utf8)
    }

    /// The bytes of padded base64 given as UTF-8 (or ASCII) bytes, or nil if they are not exactly that.
    package static func decode(_ utf8: some BidirectionalCollection<UInt8>) -> [UInt8]? {
        // The library accepts `=` followed by a symbol in the last group ("QQ=A"); the schema does not.
        if let last = utf8.last, last != UInt8(ascii: "="), utf8.dropLast().last == UInt8(ascii: "=") { return nil }
        return try? ExtrasBase64.Base64.decode(bytes: utf8)
    }
}
