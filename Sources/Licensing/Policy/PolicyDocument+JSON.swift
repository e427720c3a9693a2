import FairPlay
import Wire

extension PolicyDocument {
    /// The largest policy document read: 64 KiB.
    public static let maximumEncodedSize = 64 * 1024

    /// Reads a policy document from JSON bytes (strict RFC 8259, duplicate keys refused).
    /// - Throws: ``PolicyDocumentError`` naming the field at fault.
    public init(json bytes: some Collection<UInt8>) throws(PolicyDocumentError) {
        guard bytes.count <= Self.maximumEncodedSize else {
            throw PolicyDocumentError(field: "", reason: "document of \(bytes.count) bytes is over \(Self.maximumEncodedSize)")
        }
        let value: JSONValue
        do throws(JSONParser.Error) {
            value = try JSONValue(parsing: bytes)
        } catch {
            // The parser's reason and offset describe syntax only, never content.
            throw PolicyDocumentError(field: "", reason: "is not JSON: \(error.description)")
        }
        try self.init(value: value)
    }

    /// Reads a policy document from a parsed JSON value (e.g. the `policy` claim of a token).
    public init(value: JSONValue) throws(PolicyDocumentError) {
        guard case .object(let o) = value else { throw PolicyDocumentError(field: "", reason: "must be a JSON object") }
        let r = FieldReader(object: o, prefix: "")
        self.init()
        contentType = try r.choice("content-type", "sd, hd, uhd or audio") { ContentType(rawValue: $0) }
        minimumSecurityLevel = try r.choice("security-level", "audio, baseline or main") { Self.level(named: $0) }
        minimumKDLVersion = try r.unsigned32("kdl-minimum", minimum: 0)
        hdcp = try r.choice("hdcp", "none, type0 or type1") { Self.hdcp(named: $0) }
        // Legacy spelling of the first policy schema: Apple's JSON `hdcp-type` -1, 0, 1.
        if let legacy = try r.integer("hdcp-type", range: -1 ... 1) {
            guard hdcp == nil else { throw PolicyDocumentError(field: "hdcp-type", reason: "cannot be given together with \"hdcp\"") }
            hdcp = HDCPRequirement(hdcpType: Int(legacy))
        }
        airPlay = try r.choice("airplay", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        avAdapter = try r.choice("av-adapter", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        virtualMachine = try r.choice("virtual-machine", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        if let s = try r.section("rental") {
            rental.notBefore = try s.integer("not-before", range: 0 ... Int64.max)
            rental.notAfter = try s.integer("not-after", range: 0 ... Int64.max)
            rental.durationSeconds = try s.unsigned32("duration", minimum: 0)
            if let from = rental.notBefore, let to = rental.notAfter, to <= from {
                throw PolicyDocumentError(field: "rental.not-after", reason: "must be after rental.not-before")
            }
        }
        if let s = try r.section("lease") {
            lease.durationSeconds = try s.unsigned32("duration", minimum: 0)
            lease.renewalAllowed = try s.bool("renewal")
            lease.requiresPlaybackState = try s.bool("requires-playback-state")
        }
        // Legacy spelling of the first policy schema.
        if let legacy = try r.unsigned32("lease-duration", minimum: 1) {
            guard lease.durationSeconds == nil else {
                throw PolicyDocumentError(field: "lease-duration", reason: "cannot be given together with \"lease.duration\"")
            }
            lease.durationSeconds = legacy
        }
        persistence = try r.choice("persistence", "none, unlimited or rental-duration") { PersistencePolicy(rawValue: $0) }
        if let s = try r.section("offline") {
            offline.enabled = try s.bool("enabled")
            offline.storageSeconds = try s.unsigned32("storage-duration", minimum: 0)
            offline.playbackSeconds = try s.unsigned32("playback-duration", minimum: 0)
        }
        deviceLimit = try r.limit("device-limit")
        maxStreams = try r.limit("max-streams")
        whenFull = try r.choice("when-full", "refuse-new or end-oldest") { WhenFull(rawValue: $0) }
        entitlementRequired = try r.bool("entitlement-required")
    }

    /// The document as a JSON value, in the current spelling (legacy fields are written in their
    /// new form); nil fields are left out, so a layer stays a layer.
    public var jsonValue: JSONValue {
        var o: [String: JSONValue] = [:]
        if let contentType { o["content-type"] = .string(contentType.rawValue) }
        if let minimumSecurityLevel { o["security-level"] = .string(minimumSecurityLevel.name) }
        if let minimumKDLVersion { o["kdl-minimum"] = .integer(Int64(minimumKDLVersion)) }
        if let hdcp, let name = Self.name(of: hdcp) { o["hdcp"] = .string(name) }
        if let airPlay { o["airplay"] = .string(airPlay.jsonName) }
        if let avAdapter { o["av-adapter"] = .string(avAdapter.jsonName) }
        if let virtualMachine { o["virtual-machine"] = .string(virtualMachine.jsonName) }
        if !rental.isEmpty {
            var s: [String: JSONValue] = [:]
            if let v = rental.notBefore { s["not-before"] = .integer(v) }
            if let v = rental.notAfter { s["not-after"] = .integer(v) }
            if let v = rental.durationSeconds { s["duration"] = .integer(Int64(v)) }
            o["rental"] = .object(s)
        }
        if !lease.isEmpty {
            var s: [String: JSONValue] = [:]
            if let v = lease.durationSeconds { s["duration"] = .integer(Int64(v)) }
            if let v = lease.renewalAllowed { s["renewal"] = .bool(v) }
            if let v = lease.requiresPlaybackState { s["requires-playback-state"] = .bool(v) }
            o["lease"] = .object(s)
        }
        if let persistence { o["persistence"] = .string(persistence.rawValue) }
        if !offline.isEmpty {
            var s: [String: JSONValue] = [:]
            if let v = offline.enabled { s["enabled"] = .bool(v) }
            if let v = offline.storageSeconds { s["storage-duration"] = .integer(Int64(v)) }
            if let v = offline.playbackSeconds { s["playback-duration"] = .integer(Int64(v)) }
            o["offline"] = .object(s)
        }
        if let deviceLimit { o["device-limit"] = Self.json(deviceLimit) }
        if let maxStreams { o["max-streams"] = Self.json(maxStreams) }
        if let whenFull { o["when-full"] = .string(whenFull.rawValue) }
        if let entitlementRequired { o["entitlement-required"] = .bool(entitlementRequired) }
        return .object(o)
    }

    /// Compact JSON with sorted keys (``JSONWriter``).
    public func jsonBytes() -> [UInt8] { jsonValue.encoded() }

    static let restrictionNames = "allow, deny, cap-baseline or cap-audio"

    static func level(named name: String) -> SecurityLevel? {
        switch name {
        case "audio": .audio
        case "baseline": .baseline
        case "main": .main
        default: nil
        }
    }

    static func hdcp(named name: String) -> HDCPRequirement? {
        switch name {
        case "none": .notRequired
        case "type0": .type0
        case "type1": .type1
        default: nil
        }
    }

    static func name(of hdcp: HDCPRequirement) -> String? {
        switch hdcp {
        case .notRequired: "none"
        case .type0: "type0"
        case .type1: "type1"
        default: nil
        }
    }

    private static func json(_ limit: PolicyLimit) -> JSONValue {
        switch limit {
        case .unlimited: .string("unlimited")
        case .maximum(let n): .integer(Int64(n))
        }
    }
}

/// Reads typed fields of one JSON object, naming each by its dotted path in errors.
private struct FieldReader {
    var object: [String: JSONValue]
    var prefix: String

    func path(_ key: String) -> String { prefix.isEmpty ? key : prefix + "." + key }

    /// Nil when absent; JSON `null` counts as absent too, so a writer can say "no opinion".
    func value(_ key: String) -> JSONValue? {
        guard let v = object[key] else { return nil }
        if case .null = v { return nil }
        return v
    }

    func choice<T>(_ key: String, _ allowed: String, _ make: (String) -> T?) throws(PolicyDocumentError) -> T? {
        guard let v = value(key) else { return nil }
        guard case .string(let text) = v, let result = make(text) else {
            throw PolicyDocumentError(field: path(key), reason: "must be one of \(allowed)")
        }
        return result
    }

    func integer(_ key: String, range: ClosedRange<Int64>) throws(PolicyDocumentError) -> Int64? {
        guard let v = value(key) else { return nil }
        guard case .integer(let n) = v, range.contains(n) else {
            throw PolicyDocumentError(field: path(key), reason: "must be an integer in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    func unsigned32(_ key: String, minimum: Int64) throws(PolicyDocumentError) -> UInt32? {
        guard let n = try integer(key, range: minimum ... Int64(UInt32.max)) else { return nil }
        return UInt32(exactly: n)
    }

    func bool(_ key: String) throws(PolicyDocumentError) -> Bool? {
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw PolicyDocumentError(field: path(key), reason: "must be true or false") }
        return b
    }

    func limit(_ key: String) throws(PolicyDocumentError) -> PolicyLimit? {
        guard let v = value(key) else { return nil }
        switch v {
        case .string("unlimited"): return .unlimited
        case .integer(let n) where n >= 1 && n <= 1_000_000: return .maximum(Int(n))
        default: throw PolicyDocumentError(field: path(key), reason: "must be an integer in 1...1000000 or \"unlimited\"")
        }
    }

    func section(_ key: String) throws(PolicyDocumentError) -> FieldReader? {
        guard let v = value(key) else { return nil }
        guard case .object(let o) = v else { throw PolicyDocumentError(field: path(key), reason: "must be an object") }
        return FieldReader(object: o, prefix: path(key))
    }
}
