import FairPlay
import Wire

extension PolicyDocument {
    /// The largest policy document read: 64 KiB.
    package static let maximumEncodedSize = 64 * 1024

    /// Reads a policy document from JSON bytes (strict RFC 8259, duplicate keys refused).
    /// - Throws: ``PolicyDocumentError`` naming the field at fault.
    package init(json bytes: some Collection<UInt8>) throws(PolicyDocumentError) {
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
    package init(value: JSONValue) throws(PolicyDocumentError) {
        self.init()
        do throws(JSONFieldError) {
            try read(JSONFields(value))
        } catch {
            throw PolicyDocumentError(field: error.field, reason: error.reason)
        }
    }

    private mutating func read(_ r: JSONFields) throws(JSONFieldError) {
        contentType = try r.choice("content-type", "sd, hd, uhd or audio") { ContentType(rawValue: $0) }
        minimumSecurityLevel = try r.choice("security-level", "audio, baseline or main") { Self.level(named: $0) }
        minimumKDLVersion = try r.policyUnsigned32("kdl-minimum", minimum: 0)
        hdcp = try r.choice("hdcp", "none, type0 or type1") { Self.hdcp(named: $0) }
        // Legacy spelling of the first policy schema: Apple's JSON `hdcp-type` -1, 0, 1.
        if let legacy = try r.integer("hdcp-type", in: -1...1) {
            guard hdcp == nil else { throw r.error("hdcp-type", "cannot be given together with \"hdcp\"") }
            hdcp = HDCPRequirement(hdcpType: Int(legacy))
        }
        airPlay = try r.choice("airplay", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        avAdapter = try r.choice("av-adapter", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        virtualMachine = try r.choice("virtual-machine", Self.restrictionNames) { ClientRestriction(jsonName: $0) }
        if let s = try r.object("rental") {
            rental.notBefore = try s.integer("not-before", in: 0...Int64.max)
            rental.notAfter = try s.integer("not-after", in: 0...Int64.max)
            rental.durationSeconds = try s.policyUnsigned32("duration", minimum: 0)
            if let from = rental.notBefore, let to = rental.notAfter, to <= from {
                throw s.error("not-after", "must be after rental.not-before")
            }
        }
        if let s = try r.object("lease") {
            lease.durationSeconds = try s.policyUnsigned32("duration", minimum: 0)
            lease.renewalAllowed = try s.bool("renewal")
            lease.requiresPlaybackState = try s.bool("requires-playback-state")
        }
        // Legacy spelling of the first policy schema.
        if let legacy = try r.policyUnsigned32("lease-duration", minimum: 1) {
            guard lease.durationSeconds == nil else {
                throw r.error("lease-duration", "cannot be given together with \"lease.duration\"")
            }
            lease.durationSeconds = legacy
        }
        persistence = try r.choice("persistence", "none, unlimited or rental-duration") { PersistencePolicy(rawValue: $0) }
        if let s = try r.object("offline") {
            offline.enabled = try s.bool("enabled")
            offline.storageSeconds = try s.policyUnsigned32("storage-duration", minimum: 0)
            offline.playbackSeconds = try s.policyUnsigned32("playback-duration", minimum: 0)
        }
        deviceLimit = try r.policyLimit("device-limit")
        maxStreams = try r.policyLimit("max-streams")
        whenFull = try r.choice("when-full", "refuse-new or end-oldest") { WhenFull(rawValue: $0) }
        entitlementRequired = try r.bool("entitlement-required")
    }

    /// The document as a JSON value, in the current spelling (legacy fields are written in their
    /// new form); nil fields are left out, so a layer stays a layer.
    package var jsonValue: JSONValue {
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
    package func jsonBytes() -> [UInt8] { jsonValue.encoded() }

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

extension JSONFields {
    /// A policy's 32-bit unsigned count of seconds (or version) at or above `minimum`.
    fileprivate func policyUnsigned32(_ key: String, minimum: Int64) throws(JSONFieldError) -> UInt32? {
        try integer(key, in: minimum...Int64(UInt32.max)).flatMap { UInt32(exactly: $0) }
    }

    /// A device or stream limit: 1...1000000, or "unlimited".
    fileprivate func policyLimit(_ key: String) throws(JSONFieldError) -> PolicyLimit? {
        guard let v = value(key) else { return nil }
        switch v {
        case .string("unlimited"): return .unlimited
        case .integer(let n) where n >= 1 && n <= 1_000_000: return .maximum(Int(n))
        default: throw error(key, "must be an integer in 1...1000000 or \"unlimited\"")
        }
    }
}
