import Licensing

/// Which topics a job may name in its `reply-topic` header.
///
/// The header chooses where a job's CKC, HU and lease expiry go, and anyone who can write to a
/// requests topic writes it; unchecked, one tenant's producer could send its answers (or, with a
/// forged tenant, probe another's) to any topic the worker may write. So the destination is
/// checked against an allowlist, and a job naming a topic outside it is refused
/// (``KSMStatus/replyTopicRefused``) and answered on the worker's replies topic
/// (``WorkerConfiguration/repliesTopic``), which is always allowed and is not part of the policy:
/// the policy holds patterns only, so the replies topic has one source.
///
/// One setting, `reply-topics`: comma-separated entries, each a topic name or a prefix ending in
/// `*`; an entry written `TENANT:PATTERN` applies to that tenant only (a tenant identifier never
/// holds `:`). A tenant with entries of its own is limited to them; every other tenant gets the
/// entries without a tenant. A name that is no Kafka topic never matches, whatever its prefix.
/// Default (``defaultPolicy(repliesTopic:)``): the replies topic and the prefix `<replies topic>.`
/// (for the default replies topic, `fps.license.replies.*`).
public struct ReplyTopicPolicy: Sendable, Hashable {
    /// One allowed destination: a whole topic name, or every topic that starts with a prefix.
    public enum Pattern: Sendable, Hashable, CustomStringConvertible {
        case topic(String)
        case prefix(String)

        func matches(_ topic: String) -> Bool {
            switch self {
            case .topic(let name): topic.utf8.elementsEqual(name.utf8)
            case .prefix(let prefix): topic.utf8.starts(with: prefix.utf8)
            }
        }

        public var description: String {
            switch self {
            case .topic(let name): name
            case .prefix(let prefix): "\(prefix)*"
            }
        }
    }

    /// A `reply-topics` entry that cannot be used; the message names the entry's position.
    public struct InvalidEntry: Error, Sendable, CustomStringConvertible {
        /// Which entry is wrong and why, naming its position in the list.
        public let description: String
    }

    /// Patterns for tenants without entries of their own.
    public let shared: [Pattern]
    /// Per tenant, the only patterns it may use (besides the replies topic), keyed by the tenant's bytes.
    public let perTenant: [StoreIdentifier: [Pattern]]

    /// The default: `repliesTopic` and every topic below `<repliesTopic>.`.
    public static func defaultPolicy(repliesTopic: String) -> ReplyTopicPolicy {
        ReplyTopicPolicy(shared: [.topic(repliesTopic), .prefix(repliesTopic + ".")], perTenant: [:])
    }

    private init(shared: [Pattern], perTenant: [StoreIdentifier: [Pattern]]) {
        self.shared = shared
        self.perTenant = perTenant
    }

    /// Parses the `reply-topics` setting; an empty list allows only the replies topic.
    public init(entries: [String]) throws(InvalidEntry) {
        var shared: [Pattern] = []
        var perTenant: [StoreIdentifier: [Pattern]] = [:]
        for (offset, raw) in entries.enumerated() {
            let entry = raw.trimmingWhitespace()
            let position = "reply-topics entry \(offset + 1) of \(entries.count)"
            var patternText = entry
            var tenant: StoreIdentifier?
            if let colon = entry.firstIndex(of: ":") {
                do {
                    tenant = try StoreIdentifier(String(entry[..<colon]))
                } catch {
                    throw InvalidEntry(description: "\(position): the tenant before ':' is not a valid identifier (\(error.message))")
                }
                patternText = String(entry[entry.index(after: colon)...])
            }
            let pattern = try Self.pattern(patternText, position: position)
            if let tenant { perTenant[tenant, default: []].append(pattern) } else { shared.append(pattern) }
        }
        self.init(shared: shared, perTenant: perTenant)
    }

    /// True when a job of `tenant` (nil: the job could not be read) may have its answer sent to
    /// `topic` by this policy; the replies topic itself is the worker's to allow.
    public func allows(_ topic: String, tenant: StoreIdentifier?) -> Bool {
        guard Self.isValidTopicName(topic) else { return false }
        let patterns = tenant.flatMap { perTenant[$0] } ?? shared
        return patterns.contains { $0.matches(topic) }
    }

    /// The setting as it would be written, for `--check-config`.
    public var entries: [String] {
        shared.map(\.description) + perTenant.sorted { $0.key < $1.key }.flatMap { tenant, patterns in patterns.map { "\(tenant):\($0)" } }
    }

    /// Kafka's topic names: 1 to 249 of `[a-zA-Z0-9._-]`, and never `.` or `..`.
    public static func isValidTopicName(_ name: some StringProtocol) -> Bool {
        let bytes = name.utf8
        guard (1...249).contains(bytes.count), name != ".", name != ".." else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                true
            default: false
            }
        }
    }

    private static func pattern(_ text: String, position: String) throws(InvalidEntry) -> Pattern {
        if text.hasSuffix("*") {
            let prefix = text.dropLast()
            guard !prefix.isEmpty, isValidTopicName(prefix) else {
                throw InvalidEntry(description: "\(position): a prefix is topic-name characters ([a-zA-Z0-9._-]) followed by one '*'")
            }
            return .prefix(String(prefix))
        }
        guard isValidTopicName(text) else {
            throw InvalidEntry(description: "\(position): not a Kafka topic name (1 to 249 of [a-zA-Z0-9._-]) or a prefix ending in '*'")
        }
        return .topic(text)
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
