import KSMService
/// What `--check-config` hides: passwords in URLs, librdkafka secrets, header values.
public enum Redaction {
    public static let placeholder = "<redacted>"

    /// `redis://user:secret@host:6379/0` becomes `redis://user:<redacted>@host:6379/0`; a URL without
    /// `@` is returned as it is.
    ///
    /// The user info is everything up to the last `@` of the whole value, whatever the characters
    /// before it, so a password that holds `/`, `?`, `#`, `:` or `@` (written raw by mistake, or
    /// percent-encoded) is hidden all the same; a lone user info (`redis://secret@host`, Redis's
    /// form for a password alone) is hidden whole. A value with no scheme is treated alike.
    public static func redactedURL(_ url: String) -> String {
        guard let at = url.lastIndex(of: "@") else { return url }
        let start = url.range(of: "://").map(\.upperBound) ?? url.startIndex
        guard start <= at else { return placeholder + url[at...] }
        let userInfo = url[start..<at]
        if let colon = userInfo.firstIndex(of: ":") {
            return url[..<start] + userInfo[..<colon] + ":" + placeholder + url[at...]
        }
        return url[..<start] + placeholder + url[at...]
    }

    /// librdkafka properties that hold secrets: passwords, SASL/OAuth settings, private keys, JAAS.
    public static func isSecretKafkaProperty(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["password", "secret", "jaas", "oauthbearer.config", "key.pem", "ssl.key", "token"].contains { lower.contains($0) }
    }
}
