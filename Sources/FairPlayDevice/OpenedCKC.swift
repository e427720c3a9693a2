import FairPlay

/// What a device found in a CKC it could open.
public struct OpenedCKC: Sendable {
    /// The 16-byte content key, decrypted with the session key.
    public let contentKey: [UInt8]
    /// The 16-byte IV the media was encrypted with.
    public let contentIV: [UInt8]
    /// The content key duration TLLV, when the CKC carried one.
    public let keyDuration: ContentKeyDuration?
    /// The offline key TLLV, when the CKC carried one.
    public let offlineKey: OfflineKey?
    /// The HDCP enforcement TLLV's level, when present.
    public let hdcp: HDCPRequirement?
    /// The required security level TLLV's level, when present.
    public let requiredSecurityLevel: SecurityLevel?
    /// The session-key version used TLLV's key kind, when present.
    public let sessionKeyKind: UInt64?
    /// Every tag in the CKC payload, in order.
    package let tags: [TLLVTag]
}

/// Why a device refuses a CKC. The device reports -42668 (invalid CKC) for all of them.
public struct InvalidCKC: Error, Hashable, Sendable, CustomStringConvertible {
    /// The status a device reports for any refused CKC (-42668, invalid CKC).
    public static let clientStatus: Int32 = -42668
    /// Which check failed, for test output; a device reports only ``clientStatus``.
    public let reason: String
    /// Creates a refusal with the failed check's description.
    public init(_ reason: String) { self.reason = reason }
    public var description: String { "invalid CKC (-42668): \(reason)" }
}
