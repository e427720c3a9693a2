import ExtrasBase64

/// Base64url without padding (RFC 7515 section 2 / RFC 4648 section 5), strict: no `=`, no white
/// space, no characters outside the URL-safe alphabet, and unused trailing bits must be zero, so
/// each byte string has exactly one encoding (a token cannot be altered without breaking its MAC
/// input, and no two spellings of one token exist).
package enum Base64URL {
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        ExtrasBase64.Base64.encodeToString(bytes: bytes, options: [.base64UrlAlphabet, .omitPaddingCharacter])
    }

    /// Nil for anything but a canonical unpadded base64url string.
    package static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        guard let bytes = try? ExtrasBase64.Base64.decode(bytes: text, options: [.base64UrlAlphabet, .omitPaddingCharacter]) else { return nil }
        // The library ignores non-zero trailing bits and accepts padding; the one canonical spelling
        // is the one that encodes back to the same text.
        return Base64URL.encode(bytes).utf8.elementsEqual(text) ? bytes : nil
    }
}
