import KSMOperations
import KSMTestSupport
import Testing

/// `--check-config`'s URL redaction hides a password whatever characters it holds.
@Suite struct RedactionTests {
    @Test("A password with any URL-special character, raw or percent-encoded, with or without a user, single or cluster, is hidden")
    func passwordsAreHiddenWhateverTheyHold() {
        for _ in 0..<200 {
            let password = GeneratedSecret.password(length: 20, everySpecial: false)
            let encoded = GeneratedSecret.percentEncoded(password)
            for secret in [password, encoded] {
                for url in [
                    "redis://:\(secret)@h:1/0", "redis://ksm:\(secret)@h:1/0", "redis://\(secret)@h", "redis-cluster://ksm:\(secret)@a:1,b:2",
                    "\(secret)@h:1", "redis://h:1/0?password=\(secret)",
                ] {
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
