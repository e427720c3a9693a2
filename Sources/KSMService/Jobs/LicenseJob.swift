import Foundation
import Licensing
import Wire

/// One license request as the platform's edge puts it on Kafka: who asks, for what, with which SPC.
///
/// Wire form (schemas/license-job.schema.json):
/// `{"id", "tenant", "account", "spc" (base64), "deadline"? (epoch ms), "priority"? ("continuity" |
/// "new" | "prefetch", default "new"), "entitlement"?, "persistent"? (bool, default false),
/// "check-in"? (bool, default false),
/// "stream-id"? and "title-id"? (32 hex digits each), "key-period"? (identifier), "server-challenge"?
/// (16 hex digits)}`. Unknown fields are ignored, so the edge can add
/// fields before every worker knows them. The reply topic and correlation ID are not in the body:
/// they travel as Kafka headers.
package struct LicenseJob: Sendable, Hashable {
    /// The request ID, also the lease idempotency key: a redelivered job with the same ID gets the
    /// same lease result and never takes a second slot. 1...128 UTF-8 bytes, no white space, `:`, `{`, `}`.
    package var id: StoreIdentifier
    package var tenant: StoreIdentifier
    package var account: StoreIdentifier
    /// The SPC bytes as the device sent them (decoded from base64).
    package var spc: [UInt8]
    /// When the answer stops being useful, in milliseconds since 1970; nil means no deadline.
    package var deadline: Int64?
    /// Default: ``Priority/new``.
    package var priority: Priority
    /// The platform's entitlement token (docs/policy.md: a JWT, HS256); "" when none. Checked
    /// against the tenant's token secrets; the policy decides whether one is required.
    package var entitlement: String
    /// True when the platform asks for a download: a persistable key or an offline (dual expiry)
    /// key, as the policy allows. Default: false (a stream).
    package var persistent: Bool
    /// True when the platform asks for a check-in (secure invalidation report) with a sync SPC, as
    /// Apple's JSON `check-in`: answered without a CKC, and refused (paramErr) unless the SPC carries
    /// a sync v2 TLLV with flags. Default: false; a sync SPC without it is an ordinary request.
    package var checkIn: Bool
    /// The 16-byte stream ID (offline key v1: content ID) the platform assigned to a download; the
    /// device reports it back in sync SPCs. Nil: derived from the job ID.
    package var streamID: [UInt8]?
    /// The 16-byte title ID of a download (offline key v2). Nil: derived from the asset ID.
    package var titleID: [UInt8]?
    /// The key period the SPC's asset ID is asked for (live rotation): selects the period's stored key,
    /// policy layer and key-seed derivation. Nil: the asset's single key.
    package var keyPeriod: StoreIdentifier?
    /// For a sync SPC (v2): the 64-bit server challenge the platform issued to this device; the sync
    /// is refused unless the SPC carries exactly it. Nil: not checked.
    package var serverChallenge: UInt64?

    /// The largest encoded job accepted: 256 KiB. Larger inputs are refused before parsing.
    package static let maximumEncodedSize = 256 * 1024
    /// The longest entitlement accepted, in UTF-8 bytes.
    package static let maximumEntitlementLength = 16 * 1024

    package init(
        id: StoreIdentifier, tenant: StoreIdentifier, account: StoreIdentifier, spc: [UInt8],
        deadline: Int64? = nil, priority: Priority = .new, entitlement: String = "",
        persistent: Bool = false, checkIn: Bool = false, streamID: [UInt8]? = nil, titleID: [UInt8]? = nil,
        keyPeriod: StoreIdentifier? = nil, serverChallenge: UInt64? = nil
    ) {
        self.checkIn = checkIn
        self.id = id
        self.tenant = tenant
        self.account = account
        self.spc = spc
        self.deadline = deadline
        self.priority = priority
        self.entitlement = entitlement
        self.persistent = persistent
        self.streamID = streamID
        self.titleID = titleID
        self.keyPeriod = keyPeriod
        self.serverChallenge = serverChallenge
    }

    /// How urgent a job is; an open set.
    package struct Priority: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        package let rawValue: String
        /// Only the known values; use the static members.
        package init?(rawValue: String) {
            guard Self.known.contains(rawValue) else { return nil }
            self.rawValue = rawValue
        }
        private init(known: String) { self.rawValue = known }

        /// A viewer already watching needs the next key (key rotation, lease renewal): never starve.
        package static let continuity = Priority(known: "continuity")
        /// A viewer pressing play.
        package static let new = Priority(known: "new")
        /// A player fetching a key ahead of need; first to shed under load.
        package static let prefetch = Priority(known: "prefetch")

        static let known: Set<String> = ["continuity", "new", "prefetch"]
        package var description: String { rawValue }
    }
}

/// Why bytes did not decode into a ``LicenseJob``: the field to blame (nil for the body as a whole)
/// and why. Carries what could be read of the job's identity, so the reply can still be routed.
///
/// `description` quotes no field value longer than a few characters and never SPC bytes.
package struct LicenseJobError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The JSON field at fault, e.g. "spc"; nil when the body itself is at fault (size, syntax).
    package var field: String?
    package var reason: String
    /// The job's `id`, `tenant`, `account` when they were readable strings of at most 128 bytes,
    /// whether or not they were otherwise valid.
    package var id: String?
    package var tenant: String?
    package var account: String?

    package init(field: String?, _ reason: String, id: String? = nil, tenant: String? = nil, account: String? = nil) {
        self.field = field
        self.reason = reason
        self.id = id
        self.tenant = tenant
        self.account = account
    }

    package var description: String {
        if let field { return "invalid job: field \"\(field)\": \(reason)" }
        return "invalid job: \(reason)"
    }
}

extension LicenseJob {
    /// Decodes a job from its JSON bytes.
    /// - Throws: ``LicenseJobError`` naming the field and the reason: body over
    ///   ``maximumEncodedSize`` (checked before parsing), not JSON, not an object, a required field
    ///   missing, a wrong type, an identifier out of range or with a reserved character, bad base64,
    ///   an empty SPC, a negative deadline, an unknown priority.
    package init(json bytes: some Collection<UInt8>) throws(LicenseJobError) {
        guard bytes.count <= Self.maximumEncodedSize else {
            throw LicenseJobError(field: nil, "body of \(bytes.count) bytes exceeds the \(Self.maximumEncodedSize)-byte limit")
        }
        let value: JSONValue
        // The SPC's base64 is read in place from the body (never made a String): it is most of a job.
        let rawSPC: ArraySlice<UInt8>?
        do throws(JSONParser.Error) {
            (value, rawSPC) = try JSONParser.parse(bytes, rawStringMember: "spc")
        } catch {
            throw LicenseJobError(field: nil, "body is not valid JSON: \(error)")
        }
        guard case .object(let object) = value else {
            throw LicenseJobError(field: nil, "body is JSON \(value.kind), not an object")
        }
        let fields = JSONFields(object)

        // Identity first, so every later error can carry it.
        func shortString(_ key: String) -> String? {
            guard case .string(let s)? = object[key], s.utf8.count <= StoreIdentifier.maximumLength else { return nil }
            return s
        }
        let seenID = shortString("id")
        let seenTenant = shortString("tenant")
        let seenAccount = shortString("account")
        func fail(_ field: String, _ reason: String) -> LicenseJobError {
            LicenseJobError(field: field, reason, id: seenID, tenant: seenTenant, account: seenAccount)
        }
        do throws(JSONFieldError) {
            func identifier(_ key: String) throws(JSONFieldError) -> StoreIdentifier {
                let text = try fields.required(key, fields.string)
                do {
                    return try StoreIdentifier(text)
                } catch {
                    let bytes = text.utf8.count
                    if bytes == 0 || bytes > StoreIdentifier.maximumLength {
                        throw fields.error(key, "length \(bytes) bytes is not in 1...\(StoreIdentifier.maximumLength)")
                    }
                    throw fields.error(key, "contains white space, a control character, ':', '{' or '}'")
                }
            }
            func sixteenBytes(_ key: String) throws(JSONFieldError) -> [UInt8]? {
                guard let text = try fields.string(key) else { return nil }
                guard let bytes = HexEncoding.decode(text), bytes.count == 16 else { throw fields.error(key, "must be 32 hex digits (16 bytes)") }
                return bytes
            }
            func decodeSPC(_ text: some BidirectionalCollection<UInt8>) throws(JSONFieldError) -> [UInt8] {
                guard !text.isEmpty else { throw fields.error("spc", "is empty") }
                guard let data = Base64.decode(text) else {
                    throw fields.error("spc", "is not valid base64 (standard alphabet, padded, no white space)")
                }
                return data
            }

            let id = try identifier("id")
            let tenant = try identifier("tenant")
            let account = try identifier("account")
            let spcData = if let rawSPC { try decodeSPC(rawSPC) } else { try decodeSPC(try fields.required("spc", fields.string).utf8) }
            let deadline = try fields.integer("deadline", in: 0...Int64.max, expected: "a non-negative integer, milliseconds since 1970")
            // The schema has no `null` priority; absent means new.
            if fields.members["priority"] == .null { throw fields.error("priority", "must be a string, not null") }
            let priority = try fields.choice("priority", "\"continuity\", \"new\" or \"prefetch\"") { Priority(rawValue: $0) } ?? .new
            // Optional: a tenant that requires entitlement tokens checks it in policy.
            let entitlement = try fields.string("entitlement") ?? ""
            guard entitlement.utf8.count <= Self.maximumEntitlementLength else {
                throw fields.error("entitlement", "length \(entitlement.utf8.count) bytes exceeds \(Self.maximumEntitlementLength)")
            }
            let persistent = try fields.bool("persistent") ?? false
            let checkIn = try fields.bool("check-in") ?? false
            let streamID = try sixteenBytes("stream-id")
            let titleID = try sixteenBytes("title-id")
            let keyPeriod: StoreIdentifier? = fields.value("key-period") == nil ? nil : try identifier("key-period")
            var serverChallenge: UInt64?
            if let text = try fields.string("server-challenge") {
                guard text.utf8.count == 16, let value = UInt64(text, radix: 16) else {
                    throw fields.error("server-challenge", "must be 16 hex digits (64 bits)")
                }
                serverChallenge = value
            }
            self.init(
                id: id, tenant: tenant, account: account, spc: Array(spcData), deadline: deadline, priority: priority, entitlement: entitlement,
                persistent: persistent, checkIn: checkIn, streamID: streamID, titleID: titleID, keyPeriod: keyPeriod, serverChallenge: serverChallenge)
        } catch {
            throw fail(error.field, error.reason)
        }
    }

    /// The job as JSON (the edge's job records, load generators, the demo, tests).
    ///
    /// Member by member in sorted key order: the same bytes as `jsonValue.encoded()` (a test holds
    /// them equal), without building and sorting a dictionary for every job the edge produces.
    package func jsonBytes() -> [UInt8] {
        var w = JSONWriter(reservingCapacity: 256 + entitlement.utf8.count + spc.count / 3 * 4)
        w.beginObject()
        w.key("account")
        w.write(string: account.value)
        if checkIn {
            w.key("check-in")
            w.write(bool: true)
        }
        if let deadline {
            w.key("deadline")
            w.write(integer: deadline)
        }
        w.key("entitlement")
        w.write(string: entitlement)
        w.key("id")
        w.write(string: id.value)
        if let keyPeriod {
            w.key("key-period")
            w.write(string: keyPeriod.value)
        }
        if persistent {
            w.key("persistent")
            w.write(bool: true)
        }
        w.key("priority")
        w.write(string: priority.rawValue)
        if let serverChallenge {
            w.key("server-challenge")
            w.write(string: Self.serverChallengeText(serverChallenge))
        }
        w.key("spc")
        w.write(base64: spc)
        if let streamID {
            w.key("stream-id")
            w.write(string: HexEncoding.encode(streamID))
        }
        w.key("tenant")
        w.write(string: tenant.value)
        if let titleID {
            w.key("title-id")
            w.write(string: HexEncoding.encode(titleID))
        }
        w.endObject()
        return w.bytes
    }

    /// The job as a JSON tree: what ``jsonBytes()`` writes.
    package var jsonValue: JSONValue {
        var object: [String: JSONValue] = [
            "id": .string(id.value), "tenant": .string(tenant.value), "account": .string(account.value),
            "spc": .string(Base64.encode(spc)), "priority": .string(priority.rawValue),
            "entitlement": .string(entitlement),
        ]
        if let deadline { object["deadline"] = .integer(deadline) }
        if persistent { object["persistent"] = .bool(true) }
        if checkIn { object["check-in"] = .bool(true) }
        if let streamID { object["stream-id"] = .string(HexEncoding.encode(streamID)) }
        if let titleID { object["title-id"] = .string(HexEncoding.encode(titleID)) }
        if let keyPeriod { object["key-period"] = .string(keyPeriod.value) }
        if let serverChallenge { object["server-challenge"] = .string(Self.serverChallengeText(serverChallenge)) }
        return .object(object)
    }

    /// 16 lowercase hex digits, zero-padded.
    private static func serverChallengeText(_ value: UInt64) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
