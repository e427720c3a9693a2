/// A valid sync TLLV (guide tables 6-2 and 6-3): an offline rental reporting its remaining time.
package enum SyncRequest: Hashable, Sendable {
    case v1(SyncV1)
    case v2(SyncV2)

    /// The flags SDK 26 sees: a v1 TLLV has none, so a check-in with it is refused.
    package var flags: SyncFlags {
        switch self {
        case .v1: []
        case .v2(let s): s.flags
        }
    }

    /// Seconds left on the license: 0 when expired, `UInt32.max` when it has no expiry.
    package var durationToExpiry: UInt32 {
        switch self {
        case .v1(let s): s.durationToExpiry
        case .v2(let s): s.durationToExpiry
        }
    }
}

package struct SyncV1: Hashable, Sendable {
    package var contentID: [UInt8]
    package var durationToExpiry: UInt32

    package init(contentID: [UInt8], durationToExpiry: UInt32) {
        self.contentID = contentID
        self.durationToExpiry = durationToExpiry
    }

    static let minimumLength = 28
}

package struct SyncV2: Hashable, Sendable {
    package var serverChallenge: UInt64
    package var flags: SyncFlags
    package var titleID: [UInt8]
    package var durationToExpiry: UInt32
    /// The stream IDs the device invalidated (16 bytes each).
    package var invalidatedStreamIDs: [[UInt8]]

    package init(serverChallenge: UInt64, flags: SyncFlags, titleID: [UInt8], durationToExpiry: UInt32, invalidatedStreamIDs: [[UInt8]]) {
        self.serverChallenge = serverChallenge
        self.flags = flags
        self.titleID = titleID
        self.durationToExpiry = durationToExpiry
        self.invalidatedStreamIDs = invalidatedStreamIDs
    }

    static let minimumLength = 48
}

/// The flags of a sync v2 TLLV (guide table 6-4).
package struct SyncFlags: OptionSet, Hashable, Sendable {
    package let rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }

    package static let report = SyncFlags(rawValue: 1 << 0)
    package static let secureInvalidation = SyncFlags(rawValue: 1 << 1)
    package static let secureInvalidationAll = SyncFlags(rawValue: 1 << 2)
    /// The title ID field holds a title (SDK 26 `KD_SYNC_SPC_FLAG_TITLEID_VALID`).
    package static let titleIDValid = SyncFlags(rawValue: 1 << 3)
    package static let success = SyncFlags(rawValue: 1 << 16)
    package static let objectNotFound = SyncFlags(rawValue: 1 << 17)
    package static let objectExpired = SyncFlags(rawValue: 1 << 18)

    package var names: [String] {
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
