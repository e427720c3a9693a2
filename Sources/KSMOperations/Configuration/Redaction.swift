import KSMService
/// What `--check-config` hides: passwords in URLs, librdkafka secrets, header values.
public enum Redaction {
    public static let placeholder = "<redacted>"

    /// `redis://user:secret@host:6379/0` becomes `redis://user:<redacted>@host:6379/0`; a URL without
    /// a password is returned as it is.
    public static func redactedURL(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return url }
        let userInfo = rest[..<at]
        let user = userInfo.firstIndex(of: ":").map { userInfo[..<$0] }
        if let user {
            return url[..<scheme.upperBound] + user + ":" + placeholder + rest[at...]
        }
        // `redis://secret@host`: Redis's URL form puts a lone password there.
        return url[..<scheme.upperBound] + placeholder + rest[at...]
    }

    /// librdkafka properties that hold secrets: passwords, SASL/OAuth settings, private keys, JAAS.
    public static func isSecretKafkaProperty(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["password", "secret", "jaas", "oauthbearer.config", "key.pem", "ssl.key", "token"].contains { lower.contains($0) }
    }
}
