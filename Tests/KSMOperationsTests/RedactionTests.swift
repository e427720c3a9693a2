import KSMOperations
import Testing

/// `--check-config`'s URL redaction hides a password whatever characters it holds.
@Suite struct RedactionTests {
    static let specials = Array("/?#%:@+[]!$&'()*,;= ")

    static func generatedPassword() -> String {
        var random = SystemRandomNumberGenerator()
        let base64 = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")
        var characters = (0..<20).map { _ in base64.randomElement(using: &random)! }
        for special in specials where Bool.random(using: &random) {
            characters.insert(special, at: Int.random(in: 0...characters.count, using: &random))
        }
        return String(characters)
    }

    @Test("A password with any URL-special character, raw or percent-encoded, with or without a user, single or cluster, is hidden")
    func passwordsAreHiddenWhateverTheyHold() {
        for _ in 0..<200 {
            let password = Self.generatedPassword()
            let encoded = password.utf8.map { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) ? String(UnicodeScalar(byte)) : "%" + String(byte, radix: 16)
            }.joined()
            for secret in [password, encoded] {
                for url in ["redis://:\(secret)@h:1/0", "redis://ksm:\(secret)@h:1/0", "redis://\(secret)@h", "redis-cluster://ksm:\(secret)@a:1,b:2",
                            "\(secret)@h:1", "redis://h:1/0?password=\(secret)"] {
                    let shown = Redaction.redactedURL(url)
                    #expect(!shown.contains(secret), "\(shown)")
                    #expect(shown.contains(Redaction.placeholder))
                }
            }
        }
    }

    @Test("The host stays readable; a URL without user info or query is unchanged")
    func hostStays() {
        #expect(Redaction.redactedURL("redis://ksm:p%2Fw@10.0.0.1:6379/2") == "redis://<redacted>@10.0.0.1:6379/2")
        #expect(Redaction.redactedURL("redis://p/w@h") == "redis://<redacted>@h")
        #expect(Redaction.redactedURL("redis-cluster://a:1,b:2") == "redis-cluster://a:1,b:2")
        #expect(Redaction.redactedURL("redis://h:1/0?x=1") == "redis://h:1/0?<redacted>")
    }
}
