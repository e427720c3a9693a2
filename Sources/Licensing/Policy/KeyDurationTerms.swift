import FairPlay

/// How long the key lives on the device: at most one of the guide's content key duration TLLV
/// (lease, rental, both, persistable) or the offline key TLLV (dual expiry). One enum, so a CKC can
/// never carry both (the guide: the client rejects such a CKC) and a lease never travels with an
/// offline key (Apple's SDK: paramErr).
package enum KeyDurationTerms: Hashable, Sendable {
    /// No duration TLLV: the key is valid for this playback.
    case none
    case lease(seconds: UInt32)
    case rental(seconds: UInt32)
    case leaseAndRental(lease: UInt32, rental: UInt32)
    case persistableUnlimited
    case persistableLimited(seconds: UInt32)
    /// Offline key TLLV: storage and playback durations (0 means no limit). The engine issues it only
    /// where the CKC carries the TLLV (capability bit 3 and a media playback state, ``OfflineDelivery``),
    /// as version 2, since the worker always names a stream and a title ID.
    case dualExpiry(storage: UInt32, playback: UInt32, offlineKeyVersion: UInt32)

    /// The content key duration TLLV to send; nil for ``none`` and ``dualExpiry``.
    package var contentKeyDuration: ContentKeyDuration? {
        switch self {
        case .none, .dualExpiry: nil
        case .lease(let s): .lease(s)
        case .rental(let s): .rental(s)
        case .leaseAndRental(let l, let r): .leaseAndRental(lease: l, rental: r)
        case .persistableUnlimited: .persistableUnlimited
        case .persistableLimited(let s): .persistable(limitedTo: s)
        }
    }

    /// The offline key TLLV to send, given the 16-byte stream (content) ID and title ID the
    /// platform assigned; nil unless ``dualExpiry``.
    package func offlineKey(streamID: [UInt8], titleID: [UInt8]) -> OfflineKey? {
        guard case .dualExpiry(let storage, let playback, let version) = self else { return nil }
        return OfflineKey(version: version, contentID: streamID, storageDuration: storage, playbackDuration: playback, titleID: version == 2 ? titleID : nil)
    }

    /// The lease seconds, if the key is leased.
    package var leaseSeconds: UInt32? {
        switch self {
        case .lease(let s): s
        case .leaseAndRental(let l, _): l
        default: nil
        }
    }

    /// A short name for replies and logs.
    package var kind: String {
        switch self {
        case .none: "none"
        case .lease: "lease"
        case .rental: "rental"
        case .leaseAndRental: "lease-and-rental"
        case .persistableUnlimited: "persistable-unlimited"
        case .persistableLimited: "persistable-limited"
        case .dualExpiry: "dual-expiry"
        }
    }
}
