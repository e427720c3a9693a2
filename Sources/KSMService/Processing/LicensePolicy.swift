import FairPlay
import Foundation
import Licensing

/// The policy document a tenant (default) or an asset (override) holds in the store; minimal for
/// now (schemas/policy.schema.json), extended later:
/// `{"content-type": "sd" | "hd" | "uhd" | "audio", "hdcp-type"?: -1 | 0 | 1, "lease-duration"?: seconds}`.
///
/// Unknown fields are ignored, so a newer policy writer does not break older workers.
public struct LicensePolicy: Sendable, Hashable {
    /// Which of Apple's default rules applies.
    public var contentType: ContentType
    /// The HDCP level the content owner asks for; Apple's rules may raise it (hd at least type 0,
    /// uhd type 1). Default: type 0.
    public var hdcp: HDCPRequirement
    /// Overrides the tenant's lease duration (seconds) for this policy's assets; nil uses
    /// `TenantRecord.leaseDurationSeconds`.
    public var leaseDurationSeconds: UInt32?

    public init(contentType: ContentType, hdcp: HDCPRequirement = .type0, leaseDurationSeconds: UInt32? = nil) {
        self.contentType = contentType
        self.hdcp = hdcp
        self.leaseDurationSeconds = leaseDurationSeconds
    }

    /// Why a policy document is unusable; names the field, never quotes the document.
    public struct InvalidPolicy: Error, Sendable, Hashable, CustomStringConvertible {
        public var reason: String
        public var description: String { "invalid policy: \(reason)" }
    }

    /// The largest policy document read: 64 KiB.
    public static let maximumEncodedSize = 64 * 1024

    /// Reads a policy document.
    public init(json bytes: [UInt8]) throws(InvalidPolicy) {
        guard bytes.count <= Self.maximumEncodedSize else { throw InvalidPolicy(reason: "document of \(bytes.count) bytes is too large") }
        guard case .object(let o)? = try? JSONValue(parsing: bytes) else {
            throw InvalidPolicy(reason: "not a JSON object")
        }
        guard case .string(let typeText)? = o["content-type"] else {
            throw InvalidPolicy(reason: "\"content-type\" is missing or not a string")
        }
        guard let type = ContentType(rawValue: typeText) else {
            throw InvalidPolicy(reason: "\"content-type\" must be sd, hd, uhd or audio")
        }
        var hdcp = HDCPRequirement.type0
        if let value = o["hdcp-type"] {
            guard case .integer(let n) = value, let level = HDCPRequirement(hdcpType: Int(n)) else {
                throw InvalidPolicy(reason: "\"hdcp-type\" must be -1, 0 or 1")
            }
            hdcp = level
        }
        var lease: UInt32?
        if let value = o["lease-duration"] {
            guard case .integer(let n) = value, n >= 1, let seconds = UInt32(exactly: n) else {
                throw InvalidPolicy(reason: "\"lease-duration\" must be an integer number of seconds, 1...\(UInt32.max)")
            }
            lease = seconds
        }
        self.init(contentType: type, hdcp: hdcp, leaseDurationSeconds: lease)
    }

    /// The document as JSON (admin tools and tests).
    public func jsonBytes() -> [UInt8] {
        var o: [String: JSONValue] = ["content-type": .string(contentType.rawValue)]
        if let type = hdcp.hdcpType { o["hdcp-type"] = .integer(Int64(type)) }
        if let leaseDurationSeconds { o["lease-duration"] = .integer(Int64(leaseDurationSeconds)) }
        return JSONValue.object(o).encoded()
    }
}
