import KSMService

/// What `--check-config` hides: passwords in URLs, librdkafka secrets, header values.
package enum Redaction {
    package static let placeholder = "<redacted>"

    /// `redis://user:secret@host:6379/0` becomes `redis://<redacted>@host:6379/0`.
    ///
    /// The whole user info is hidden, the user with the password: everything up to the last `@`,
    /// whatever the characters before it, so a password that holds `/`, `?`, `#`, `:` or `@`
    /// (written raw by mistake, or percent-encoded) is hidden all the same, and a lone password
    /// holding a `:` cannot leave its first part on show as a user. A query or fragment (refused
    /// by the parser, but `?password=` is still text to hide) is hidden whole; when one starts
    /// before the last `@`, nothing after the scheme is shown. A value with no scheme is treated alike.
    package static func redactedURL(_ url: String) -> String {
        var schemeEnd = url.range(of: "://").map(\.upperBound) ?? url.startIndex
        // An `@` before the `://` means the `://` is no scheme's: all of it is user info then.
        if let last = url.lastIndex(of: "@"), last < schemeEnd { schemeEnd = url.startIndex }
        let rest = url[schemeEnd...]
        let at = rest.lastIndex(of: "@")
        let query = rest.firstIndex { $0 == "?" || $0 == "#" }
        var shown = String(url[..<schemeEnd])
        if let at, let query, query < at { return shown + placeholder }
        var tail = rest
        if let at {
            shown += placeholder
            tail = rest[at...]
        }
        if let query { return shown + tail[...query] + placeholder }
        return shown + tail
    }

    /// librdkafka properties that hold secrets: passwords, SASL/OAuth settings, private keys, JAAS.
    package static func isSecretKafkaProperty(_ name: String) -> Bool {
        let lower = name.lowercased()
        return ["password", "secret", "jaas", "oauthbearer.config", "key.pem", "ssl.key", "token"].contains { lower.contains($0) }
    }
}
