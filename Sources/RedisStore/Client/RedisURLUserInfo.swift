import Wire

/// The user and password of a `redis://` or `redis-cluster://` URL, read as RFC 3986 writes them.
///
/// User info is everything between `://` and the last `@`, so a character that belongs in the
/// password can never end it early and leave the rest to be read (and printed) as a host or path.
/// Inside it only unreserved characters, sub-delimiters (`! $ & ' ( ) * + , ; =`), `:` and
/// percent-encoded bytes may appear (RFC 3986, section 3.2.1); anything else (`/ ? # [ ] @`, a `%`
/// not followed by two hex digits, white space) is refused with the rule and its fix, never with
/// the text itself. The first `:` separates the user from the password; a lone user info is the
/// password, as redis-cli reads it. `+` is a plain `+`: form encoding's space does not apply.
package struct RedisURLUserInfo: Sendable, Hashable {
    package var username: String?
    package var password: String?

    /// Splits `rest` (the URL after its scheme's `://`) into its user info and what follows the
    /// last `@`; a URL without `@` has no user info.
    package static func split(_ rest: Substring, url what: String) throws(RedisError) -> (userInfo: RedisURLUserInfo, remainder: Substring) {
        guard let at = rest.lastIndex(of: "@") else { return (RedisURLUserInfo(), rest) }
        let raw = rest[..<at]
        var info = RedisURLUserInfo()
        if let colon = raw.firstIndex(of: ":") {
            let user = try decode(raw[..<colon], part: "user", url: what)
            info.username = user.isEmpty ? nil : user
            info.password = try decode(raw[raw.index(after: colon)...], part: "password", url: what)
        } else {
            info.password = try decode(raw, part: "password", url: what)
        }
        return (info, rest[rest.index(after: at)...])
    }

    /// Percent-decodes one part, refusing what RFC 3986 does not allow there. The error names the
    /// part and the rule, never a character of the part.
    private static func decode(_ text: Substring, part: String, url what: String) throws(RedisError) -> String {
        func refuse(_ why: String) -> RedisError {
            RedisError(
                .invalidConfiguration,
                "\(what): the \(part) \(why); write it percent-encoded (RFC 3986): '/' as %2F, '?' as %3F, '#' as %23, '@' as %40, '%' as %25, "
                    + "'[' as %5B, ']' as %5D, a space as %20 (the \(part) is not shown)",
                isRetriable: false)
        }
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let value = HexEncoding.decode(utf8: bytes[(index + 1)...(index + 2)])?.first else {
                    throw refuse("holds a '%' that is not followed by two hex digits")
                }
                out.append(value)
                index += 3
                continue
            }
            guard isAllowed(byte) else { throw refuse("holds a character that a URL's user info may not carry as it is") }
            out.append(byte)
            index += 1
        }
        guard let decoded = String(validating: out, as: UTF8.self) else { throw refuse("decodes to bytes that are not UTF-8") }
        return decoded
    }

    /// RFC 3986 `unreserved / sub-delims / ":"`, and UTF-8 beyond ASCII (an IRI's user info), which
    /// is taken as it is.
    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"):
            true
        case 0x80...0xFF: true
        default: false
        }
    }
}
