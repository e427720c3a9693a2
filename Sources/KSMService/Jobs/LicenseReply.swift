import Foundation
import Licensing
import Wire

/// The answer to one job, as published on the reply topic (schemas/license-reply.schema.json).
///
/// Every job gets exactly one reply. `ckc` is set only when a license was issued (`status` 0);
/// `lease-expires-at` only when a lease was granted or renewed. `reason` is for people: it names
/// what was wrong, never a key, an SPC byte or a CKC byte.
package struct LicenseReply: Sendable, Hashable {
    /// The job's request ID; "" when the job could not be parsed far enough to read one.
    package var id: String
    package var status: KSMStatus
    package var reason: String
    /// The CKC, when a license was issued.
    package var ckc: [UInt8]?
    /// When the granted or renewed lease ends, in milliseconds since 1970.
    package var leaseExpiresAt: Int64?
    /// The SPC's asset ID, when the SPC opened.
    package var assetID: [UInt8]?
    /// The device's anonymized ID (HU), when the SPC opened.
    package var hu: [UInt8]?
    package var tenant: String?
    package var account: String?
    /// Which rule decided, e.g. "lease:granted", "token:expired", "lease:too-many-streams", "deadline".
    package var rule: String
    /// For a retriable refusal: when to ask again, in milliseconds (jittered by the worker).
    package var retryAfterMilliseconds: Int64?
    /// For a success on a rotating stream: the next boundary and when this viewer should fetch the
    /// next key (``NextKeyAdvice``); nil otherwise.
    package var nextKey: NextKeyAdvice?
    /// The exact bytes kept for this answer: on a duplicate, the bytes stored when the job was first
    /// answered; on a first answer, the bytes this worker just stored (so they are not written twice).
    /// ``jsonBytes()`` returns them verbatim, so every copy of an answer is byte-identical (a CKC
    /// rebuilt would differ: fresh random IVs). Once set, the other fields must not change.
    package var storedJSON: [UInt8]?
    /// True when this answer repeats bytes stored for an earlier delivery of the job (a redelivered
    /// job); the worker marks it `ksm-duplicate: 1`.
    package var isDuplicate = false

    package init(
        id: String, status: KSMStatus, reason: String, ckc: [UInt8]? = nil, leaseExpiresAt: Int64? = nil,
        assetID: [UInt8]? = nil, hu: [UInt8]? = nil, tenant: String? = nil, account: String? = nil, rule: String,
        retryAfterMilliseconds: Int64? = nil
    ) {
        self.id = id
        self.status = status
        self.reason = reason
        self.ckc = ckc
        self.leaseExpiresAt = leaseExpiresAt
        self.assetID = assetID
        self.hu = hu
        self.tenant = tenant
        self.account = account
        self.rule = rule
        self.retryAfterMilliseconds = retryAfterMilliseconds
    }

    /// A reply for bytes that did not decode into a job (status ``KSMStatus/invalidJob``).
    package init(invalidJob error: LicenseJobError) {
        self.init(
            id: error.id ?? "", status: .invalidJob, reason: error.description, tenant: error.tenant,
            account: error.account, rule: error.field.map { "job:\($0)" } ?? "job")
    }

    /// True when the same job may succeed if sent again later.
    package var isRetriable: Bool { status.isRetriable }

    /// A duplicate answer: the stored bytes decoded for the caller's bookkeeping, published verbatim.
    /// Nil when the bytes are not a reply (a corrupt record: the job is then answered afresh).
    package init?(duplicate bytes: [UInt8]) {
        guard let decoded = try? LicenseReply(json: bytes) else { return nil }
        self = decoded
        storedJSON = bytes
        isDuplicate = true
    }

    /// The asset ID as text when it is UTF-8 without control characters (the usual `skd://...`),
    /// else nil; `asset-id-hex` always carries the exact bytes.
    package var assetIDText: String? {
        guard let assetID, let text = String(validating: assetID, as: UTF8.self),
            !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F })
        else { return nil }
        return text
    }
}

extension LicenseReply {
    /// The reply as compact JSON with sorted keys.
    ///
    /// Fields: `id`, `status`, `status-name`, `retriable`, `reason`, `rule`, and when known `ckc`
    /// (base64), `lease-expires-at`, `asset-id` (text), `asset-id-hex`, `hu` (hex), `tenant`, `account`,
    /// for a retriable refusal `retry-after-ms`, and on a rotating stream `next-key`.
    package func jsonBytes() -> [UInt8] {
        if let storedJSON { return storedJSON }
        // Member by member in sorted key order: the same bytes as `jsonValue.encoded()` (a test
        // holds them equal), without building and sorting a dictionary for every reply.
        var w = JSONWriter(reservingCapacity: 320 + reason.utf8.count + (ckc?.count ?? 0) / 3 * 4)
        w.beginObject()
        if let account {
            w.key("account")
            w.write(string: account)
        }
        if let assetID {
            if let text = assetIDText {
                w.key("asset-id")
                w.write(string: text)
            }
            w.key("asset-id-hex")
            w.write(string: HexEncoding.encode(assetID))
        }
        if let ckc {
            w.key("ckc")
            w.write(base64: ckc)
        }
        if let hu {
            w.key("hu")
            w.write(string: HexEncoding.encode(hu))
        }
        w.key("id")
        w.write(string: id)
        if let leaseExpiresAt {
            w.key("lease-expires-at")
            w.write(integer: leaseExpiresAt)
        }
        if let nextKey {
            w.key("next-key")
            w.beginObject()
            w.key("boundary")
            w.write(integer: nextKey.boundaryMilliseconds)
            w.key("fetch-at")
            w.write(integer: nextKey.fetchAtMilliseconds)
            w.endObject()
        }
        w.key("reason")
        w.write(string: reason)
        w.key("retriable")
        w.write(bool: status.isRetriable)
        if let retryAfterMilliseconds {
            w.key("retry-after-ms")
            w.write(integer: retryAfterMilliseconds)
        }
        w.key("rule")
        w.write(string: rule)
        w.key("status")
        w.write(integer: Int64(status.rawValue))
        w.key("status-name")
        w.write(string: status.name)
        if let tenant {
            w.key("tenant")
            w.write(string: tenant)
        }
        w.endObject()
        return w.bytes
    }

    /// The reply as a JSON tree: what ``jsonBytes()`` writes (without ``storedJSON``).
    package var jsonValue: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "status": .integer(Int64(status.rawValue)), "status-name": .string(status.name),
            "retriable": .bool(status.isRetriable), "reason": .string(reason), "rule": .string(rule),
        ]
        if let ckc { o["ckc"] = .string(Base64.encode(ckc)) }
        if let leaseExpiresAt { o["lease-expires-at"] = .integer(leaseExpiresAt) }
        if let assetID {
            if let text = assetIDText { o["asset-id"] = .string(text) }
            o["asset-id-hex"] = .string(HexEncoding.encode(assetID))
        }
        if let hu { o["hu"] = .string(HexEncoding.encode(hu)) }
        if let tenant { o["tenant"] = .string(tenant) }
        if let account { o["account"] = .string(account) }
        if let retryAfterMilliseconds { o["retry-after-ms"] = .integer(retryAfterMilliseconds) }
        if let nextKey {
            o["next-key"] = .object(["boundary": .integer(nextKey.boundaryMilliseconds), "fetch-at": .integer(nextKey.fetchAtMilliseconds)])
        }
        return .object(o)
    }

    /// Why bytes are not a reply this version understands.
    package struct DecodingError: Error, Sendable, CustomStringConvertible {
        package let reason: String
        package var description: String { "invalid reply: \(reason)" }
    }

    /// Reads a reply back (for the edge, tools and tests). Unknown fields are ignored.
    package init(json bytes: some Collection<UInt8>) throws(DecodingError) {
        let object: [String: JSONValue]
        switch try? JSONValue(parsing: bytes) {
        case .object(let o)?: object = o
        case _?: throw DecodingError(reason: "not a JSON object")
        case nil: throw DecodingError(reason: "not valid JSON")
        }
        func string(_ key: String) throws(DecodingError) -> String? {
            switch object[key] {
            case nil: return nil
            case .string(let s)?: return s
            default: throw DecodingError(reason: "\(key) is not a string")
            }
        }
        func binary(_ key: String, _ decode: (String) -> [UInt8]?) throws(DecodingError) -> [UInt8]? {
            guard let text = try string(key) else { return nil }
            guard let value = decode(text) else { throw DecodingError(reason: "\(key) is not decodable") }
            return value
        }
        guard let id = try string("id"), let reason = try string("reason"), let rule = try string("rule") else {
            throw DecodingError(reason: "id, reason or rule missing")
        }
        guard case .integer(let status)? = object["status"], let code = Int32(exactly: status) else {
            throw DecodingError(reason: "status is not a 32-bit integer")
        }
        func integer(_ key: String) throws(DecodingError) -> Int64? {
            switch object[key] {
            case nil: return nil
            case .integer(let value)?: return value
            default: throw DecodingError(reason: "\(key) is not an integer")
            }
        }
        let lease = try integer("lease-expires-at")
        let retryAfter = try integer("retry-after-ms")
        self.init(
            id: id, status: KSMStatus(rawValue: code), reason: reason,
            ckc: try binary("ckc") { Base64.decode($0) },
            leaseExpiresAt: lease,
            assetID: try binary("asset-id-hex") { HexEncoding.decode($0) },
            hu: try binary("hu") { HexEncoding.decode($0) },
            tenant: try string("tenant"), account: try string("account"), rule: rule, retryAfterMilliseconds: retryAfter)
        switch object["next-key"] {
        case nil: break
        case .object(let advice)?:
            guard case .integer(let boundary)? = advice["boundary"], case .integer(let fetchAt)? = advice["fetch-at"] else {
                throw DecodingError(reason: "next-key lacks an integer boundary or fetch-at")
            }
            nextKey = NextKeyAdvice(boundaryMilliseconds: boundary, fetchAtMilliseconds: fetchAt)
        default: throw DecodingError(reason: "next-key is not an object")
        }
    }
}
