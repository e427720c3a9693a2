import FairPlay

/// What a device found in a CKC it could open.
public struct OpenedCKC: Sendable {
    public let contentKey: [UInt8]
    public let contentIV: [UInt8]
    public let keyDuration: ContentKeyDuration?
    public let offlineKey: OfflineKey?
    public let hdcp: HDCPRequirement?
    public let requiredSecurityLevel: SecurityLevel?
    /// The session-key version used TLLV's key kind, when present.
    public let sessionKeyKind: UInt64?
    /// Every tag in the CKC payload, in order.
    package let tags: [TLLVTag]
}

/// Why a device refuses a CKC. The device reports -42668 (invalid CKC) for all of them.
public struct InvalidCKC: Error, Hashable, Sendable, CustomStringConvertible {
    public static let clientStatus: Int32 = -42668
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "invalid CKC (-42668): \(reason)" }
}
