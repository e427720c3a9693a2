import KSMService

/// `ksm edge`'s admission settings: where the token is read, the key-encryption keys that open the
/// tenants' token secrets, the per-client rate limit. Resolved from flags over the environment as
/// ``EdgeConfiguration`` is; `--kek` means what it means for `ksm serve` and reads the same
/// variables (`KSM_KEK_FILES`, and `KSM_KEKS` at start-up).
package struct EdgeAdmissionSettings: Sendable, Hashable {
    package var tokenSources: EdgeTokenSources
    /// Key-encryption key ID to file path.
    package var keyEncryptionKeyFiles: [String: String]
    /// Nil: no rate limit (the default; see docs/edge.md, "Rate limits").
    package var rateLimit: EdgeRateLimiter.Rate?
    package var trustForwardedFor: Bool

    package init(
        tokenSources: EdgeTokenSources = .init(), keyEncryptionKeyFiles: [String: String] = [:], rateLimit: EdgeRateLimiter.Rate? = nil,
        trustForwardedFor: Bool = false
    ) {
        self.tokenSources = tokenSources
        self.keyEncryptionKeyFiles = keyEncryptionKeyFiles
        self.rateLimit = rateLimit
        self.trustForwardedFor = trustForwardedFor
    }

    package static let tokenHeaderEnvironment = "KSM_EDGE_TOKEN_HEADER"
    package static let tokenQueryEnvironment = "KSM_EDGE_TOKEN_QUERY"
    package static let rateLimitEnvironment = "KSM_EDGE_RATE_LIMIT"
    package static let rateBurstEnvironment = "KSM_EDGE_RATE_BURST"
    package static let trustForwardedForEnvironment = "KSM_EDGE_TRUST_FORWARDED_FOR"

    /// What the command line gave; nil (or empty) where a flag was not given.
    package struct Flags: Sendable {
        package var tokenHeader: String?
        package var tokenQuery: String?
        /// `N/s` as written, or `off`.
        package var rateLimit: String?
        package var rateBurst: String?
        /// True when `--trust-forwarded-for` was given.
        package var trustForwardedFor: Bool
        package var kek: [String]

        package init(
            tokenHeader: String? = nil, tokenQuery: String? = nil, rateLimit: String? = nil, rateBurst: String? = nil, trustForwardedFor: Bool = false,
            kek: [String] = []
        ) {
            self.tokenHeader = tokenHeader
            self.tokenQuery = tokenQuery
            self.rateLimit = rateLimit
            self.rateBurst = rateBurst
            self.trustForwardedFor = trustForwardedFor
            self.kek = kek
        }
    }

    /// Flags over the environment; problems are appended to `problems`.
    package static func resolve(_ flags: Flags, environment: [String: String], problems: inout [ConfigurationProblem]) -> EdgeAdmissionSettings {
        func given(_ flag: String?, _ flagName: String, _ variable: String) -> (String, String)? {
            flag.map { ($0, flagName) } ?? environment[variable].map { ($0, variable) }
        }
        var settings = EdgeAdmissionSettings()

        if let (name, source) = given(flags.tokenHeader, "--token-header", tokenHeaderEnvironment), !name.isEmpty {
            if isHeaderName(name) {
                settings.tokenSources.header = name
            } else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(name)\", which is not an HTTP header name."))
            }
        }
        if let (name, source) = given(flags.tokenQuery, "--token-query", tokenQueryEnvironment), !name.isEmpty {
            if name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "&") && $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: "#") }) {
                settings.tokenSources.query = name
            } else {
                problems.append(
                    .init(.invalidValue, source: source, message: "\(source) is \"\(name)\": a query parameter name of printable ASCII without & = #."))
            }
        }

        let kekVariable = ServeSetting.kek.environment
        let environmentPairs = environment[kekVariable].map { $0.split(separator: ",").map { String($0).trimmingWhiteSpace } } ?? []
        for (pair, source) in environmentPairs.map({ ($0, kekVariable) }) + flags.kek.map({ ($0, "--kek") }) where !pair.isEmpty {
            guard let eq = pair.firstIndex(of: "="), eq != pair.startIndex else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) takes ID=PATH; an entry (not shown) has no ID."))
                continue
            }
            settings.keyEncryptionKeyFiles[String(pair[..<eq])] = String(pair[pair.index(after: eq)...])
        }

        if let (text, source) = given(flags.rateLimit, "--rate-limit", rateLimitEnvironment), !["", "off", "0"].contains(text.trimmingWhiteSpace.lowercased()) {
            if let perSecond = EdgeRateLimiter.Rate.perSecond(parsing: text) {
                var burst = EdgeRateLimiter.Rate.defaultBurst(perSecond: perSecond)
                if let (burstText, burstSource) = given(flags.rateBurst, "--rate-burst", rateBurstEnvironment) {
                    if let value = Int(burstText.trimmingWhiteSpace), (1...1_000_000).contains(value) {
                        burst = Double(value)
                    } else {
                        problems.append(.init(.outOfRange, source: burstSource, message: "\(burstSource) must be a whole number from 1 to 1000000."))
                    }
                }
                settings.rateLimit = EdgeRateLimiter.Rate(perSecond: perSecond, burst: burst)
            } else {
                problems.append(.init(.invalidValue, source: source, message: "\(source) is \"\(text)\": write N/s (or N/min, N/h), e.g. 10/s, or off."))
            }
        } else if let (_, burstSource) = given(flags.rateBurst, "--rate-burst", rateBurstEnvironment) {
            problems.append(.init(.invalidValue, source: burstSource, message: "\(burstSource) needs a rate: pass --rate-limit N/s too."))
        }

        if flags.trustForwardedFor {
            settings.trustForwardedFor = true
        } else if let text = environment[trustForwardedForEnvironment] {
            switch text.trimmingWhiteSpace.lowercased() {
            case "true", "1", "yes": settings.trustForwardedFor = true
            case "false", "0", "no", "": settings.trustForwardedFor = false
            default:
                problems.append(.init(.invalidValue, source: trustForwardedForEnvironment, message: "\(trustForwardedForEnvironment) must be true or false."))
            }
        }
        return settings
    }

    /// RFC 9110 section 5.1: a field name is a token (tchar).
    static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || "!#$%&'*+-.^_`|~".utf8.contains(byte)
            }
    }

    /// `--check-config` lines, aligned with ``EdgeConfiguration/summary``.
    /// - Parameter redis: whether a Redis URL is configured (tokens are checked only with one).
    package func summaryLines(redis: Bool) -> [String] {
        let keks = keyEncryptionKeyFiles.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
        let sources = ["Authorization: Bearer"] + [tokenSources.header.map { "header \($0)" }, tokenSources.query.map { "query \($0)" }].compactMap { $0 }
        return [
            "admission          = \(redis ? "entitlement (tokens checked against the tenant's secrets)" : "header (no --redis-url: tokens are checked by the workers only)")",
            "token-from         = \(sources.joined(separator: ", "))",
            "kek                = \(keks.isEmpty ? "(none)" : keks)",
            "rate-limit         = \(rateLimit.map { "\($0) per client" } ?? "off")",
            "trust-forwarded-for = \(trustForwardedFor)",
        ]
    }
}
