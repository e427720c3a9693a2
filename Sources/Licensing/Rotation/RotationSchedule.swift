/// One rotating live stream's next key change: which key is current, which comes next, and when.
///
/// Workers read these before the boundary (``RotationScheduleStore/dueRotations(from:through:)``)
/// and warm their cache with the next key, so the storm of next-key requests at the boundary finds
/// it in memory. A schedule names the next key either by a new asset ID (the usual HLS shape: each
/// period's `skd://` URI differs) or by a key period of the same asset, or both.
package struct RotationSchedule: Sendable, Hashable {
    package var tenant: StoreIdentifier
    /// The asset ID viewers play now (its live lease slots are the viewers counted for the load).
    package var assetID: [UInt8]
    /// The key period playing now; nil when periods are told apart by asset ID alone.
    package var currentPeriod: StoreIdentifier?
    /// The asset ID of the next period's key. Default: ``assetID`` (same asset, next key period).
    package var nextAssetID: [UInt8]
    /// The next key period; nil when the next key is the next asset's single key.
    package var nextPeriod: StoreIdentifier?
    /// When the next key takes over, in milliseconds since 1970 (wall clock).
    package var boundaryMilliseconds: Int64
    /// How many keys each viewer asks for at the boundary (e.g. 2 for separate audio and video
    /// keys). Default: 1.
    package var keysPerViewer: Int

    package init(
        tenant: StoreIdentifier, assetID: [UInt8], currentPeriod: StoreIdentifier? = nil, nextAssetID: [UInt8]? = nil,
        nextPeriod: StoreIdentifier? = nil, boundaryMilliseconds: Int64, keysPerViewer: Int = 1
    ) {
        self.tenant = tenant
        self.assetID = assetID
        self.currentPeriod = currentPeriod
        self.nextAssetID = nextAssetID ?? assetID
        self.nextPeriod = nextPeriod
        self.boundaryMilliseconds = boundaryMilliseconds
        self.keysPerViewer = keysPerViewer
    }

    /// The store read a worker makes for the next key: tenant, next asset, next period. The
    /// account plays no part in a cached read (``CachingLicenseStore``), so a fixed placeholder
    /// stands in for it.
    package var nextKeyRequest: StoreRequest {
        StoreRequest(tenant: tenant, account: Self.prefetchAccount, assetID: nextAssetID, keyPeriod: nextPeriod)
    }

    /// The account named in prefetch reads (never used for per-account records).
    package static let prefetchAccount: StoreIdentifier = {
        // A valid literal: no reserved character, within the length limit.
        guard let id = try? StoreIdentifier("rotation-prefetch") else { preconditionFailure("invalid literal identifier") }
        return id
    }()
}

extension RotationSchedule {
    /// Parses a boundary as an operator writes it: milliseconds since 1970 (`1767225600000`), or
    /// relative to `nowMilliseconds` as `+90s`, `+15m` or `+2h`. Nil when the text is neither.
    package static func parseBoundary(_ text: String, nowMilliseconds: Int64) -> Int64? {
        if let absolute = Int64(text), absolute >= 0 { return absolute }
        guard text.hasPrefix("+"), let unit = text.last else { return nil }
        let scale: Int64
        switch unit {
        case "s": scale = 1000
        case "m": scale = 60_000
        case "h": scale = 3_600_000
        default: return nil
        }
        guard let amount = Int64(text.dropFirst().dropLast()), amount >= 0, amount <= 1_000_000 else { return nil }
        return nowMilliseconds + amount * scale
    }
}
