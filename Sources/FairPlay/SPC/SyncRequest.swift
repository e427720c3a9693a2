/// A valid sync TLLV (guide tables 6-2 and 6-3): an offline rental reporting its remaining time.
public enum SyncRequest: Hashable, Sendable {
    case v1(SyncV1)
    case v2(SyncV2)

    /// The flags SDK 26 sees: a v1 TLLV has none, so a check-in with it is refused.
    public var flags: SyncFlags {
        switch self {
        case .v1: []
        case .v2(let s): s.flags
        }
    }

    /// Seconds left on the license: 0 when expired, `UInt32.max` when it has no expiry.
    public var durationToExpiry: UInt32 {
        switch self {
        case .v1(let s): s.durationToExpiry
        case .v2(let s): s.durationToExpiry
        }
    }
}

public struct SyncV1: Hashable, Sendable {
    public var contentID: [UInt8]
    public var durationToExpiry: UInt32

    public init(contentID: [UInt8], durationToExpiry: UInt32) {
        self.contentID = contentID
        self.durationToExpiry = durationToExpiry
    }

    static let minimumLength = 28
}

public struct SyncV2: Hashable, Sendable {
    public var serverChallenge: UInt64
    public var flags: SyncFlags
    public var titleID: [UInt8]
    public var durationToExpiry: UInt32
    /// The stream IDs the device invalidated (16 bytes each).
    public var invalidatedStreamIDs: [[UInt8]]

    public init(serverChallenge: UInt64, flags: SyncFlags, titleID: [UInt8], durationToExpiry: UInt32, invalidatedStreamIDs: [[UInt8]]) {
        self.serverChallenge = serverChallenge
        self.flags = flags
        self.titleID = titleID
        self.durationToExpiry = durationToExpiry
        self.invalidatedStreamIDs = invalidatedStreamIDs
    }

    static let minimumLength = 48
}

/// The flags of a sync v2 TLLV (guide table 6-4).
public struct SyncFlags: OptionSet, Hashable, Sendable {
    public let rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public static let report = SyncFlags(rawValue: 1 << 0)
    public static let secureInvalidation = SyncFlags(rawValue: 1 << 1)
    public static let secureInvalidationAll = SyncFlags(rawValue: 1 << 2)
    /// The title ID field holds a title (SDK 26 `KD_SYNC_SPC_FLAG_TITLEID_VALID`).
    public static let titleIDValid = SyncFlags(rawValue: 1 << 3)
    public static let success = SyncFlags(rawValue: 1 << 16)
    public static let objectNotFound = SyncFlags(rawValue: 1 << 17)
    public static let objectExpired = SyncFlags(rawValue: 1 << 18)

    public var names: [String] {
        var out: [String] = []
        if contains(.report) { out.append("report") }
        if contains(.secureInvalidation) { out.append("secure-invalidation") }
        if contains(.secureInvalidationAll) { out.append("secure-invalidation-all") }
        if contains(.titleIDValid) { out.append("title-id-valid") }
        if contains(.success) { out.append("success") }
        if contains(.objectNotFound) { out.append("object-not-found") }
        if contains(.objectExpired) { out.append("object-expired") }
        return out
    }
}
