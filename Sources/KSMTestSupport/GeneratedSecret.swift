/// Secrets for redaction tests: random base64 text with every character a URL, a shell or a
/// `KEY=VALUE` list treats specially, so a redactor or parser that stops at one of them shows the
/// rest. Generated per run, so no output can contain one by chance.
package enum GeneratedSecret {
    /// The characters that end or split a URL's parts, a query, a list or a quoted string.
    package static let specials = Array("/?#%:@+[]!$&'()*,;= ")

    /// Base64 text of `length` characters with each special inserted at a random place; with
    /// `everySpecial` false, each special only by a coin toss (for many varied secrets).
    package static func password(length: Int = 24, everySpecial: Bool = true) -> String {
        var random = SystemRandomNumberGenerator()
        let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        var characters = (0..<length).map { _ in base64[Int.random(in: 0..<base64.count, using: &random)] }
        for special in specials where everySpecial || Bool.random(using: &random) {
            characters.insert(special, at: Int.random(in: 0...characters.count, using: &random))
        }
        return String(characters)
    }

    /// RFC 3986 percent-encoding of everything but unreserved characters (upper-case hex).
    package static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF")
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(UnicodeScalar(byte))
            default:
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }
}
