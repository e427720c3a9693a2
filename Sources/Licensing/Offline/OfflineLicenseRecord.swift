/// One offline (dual expiry) license the server issued, as recorded for later sync SPCs.
package struct OfflineLicenseRecord: Hashable, Sendable {
    /// The 16-byte content ID (offline key v1) or stream ID (v2) the device reports back.
    package var streamID: [UInt8]
    /// The 16-byte title ID (v2 only).
    package var titleID: [UInt8]?
    /// The asset ID as the SPC carried it: bytes, kept exactly (not always UTF-8 text).
    package var assetID: [UInt8]
    /// The device's HU.
    package var deviceID: [UInt8]
    /// Epoch ms.
    package var issuedAt: Int64
    package var storageSeconds: UInt32
    package var playbackSeconds: UInt32
    package var state: State
    /// When the license expires by the device's last report (epoch ms); nil without a report or
    /// when the device said it has no expiry.
    package var reportedExpiresAt: Int64?
    /// Epoch ms of the last sync SPC that touched this record.
    package var lastSyncAt: Int64?

    /// Where a recorded license stands.
    package enum State: Hashable, Sendable {
        case active
        /// The device securely invalidated (deleted) the key at this instant (epoch ms).
        case invalidated(at: Int64)
        /// The device reported the key expired.
        case expired
        /// The device reported the key not found or invalid.
        case notFoundOnDevice
    }

    package init(
        streamID: [UInt8], titleID: [UInt8]?, assetID: [UInt8], deviceID: [UInt8], issuedAt: Int64, storageSeconds: UInt32, playbackSeconds: UInt32,
        state: State = .active, reportedExpiresAt: Int64? = nil, lastSyncAt: Int64? = nil
    ) {
        self.streamID = streamID
        self.titleID = titleID
        self.assetID = assetID
        self.deviceID = deviceID
        self.issuedAt = issuedAt
        self.storageSeconds = storageSeconds
        self.playbackSeconds = playbackSeconds
        self.state = state
        self.reportedExpiresAt = reportedExpiresAt
        self.lastSyncAt = lastSyncAt
    }

    /// A record whose asset ID is given as text: its UTF-8 bytes.
    package init(
        streamID: [UInt8], titleID: [UInt8]?, assetID: String, deviceID: [UInt8], issuedAt: Int64, storageSeconds: UInt32, playbackSeconds: UInt32,
        state: State = .active, reportedExpiresAt: Int64? = nil, lastSyncAt: Int64? = nil
    ) {
        self.init(
            streamID: streamID, titleID: titleID, assetID: Array(assetID.utf8), deviceID: deviceID, issuedAt: issuedAt, storageSeconds: storageSeconds,
            playbackSeconds: playbackSeconds, state: state, reportedExpiresAt: reportedExpiresAt, lastSyncAt: lastSyncAt)
    }

    /// ``issued(terms:streamID:titleID:assetID:deviceID:nowMilliseconds:)`` with the asset ID given as text: its UTF-8 bytes.
    package static func issued(terms: LicenseTerms, streamID: [UInt8], titleID: [UInt8], assetID: String, deviceID: [UInt8], nowMilliseconds: Int64)
        -> OfflineLicenseRecord?
    {
        issued(terms: terms, streamID: streamID, titleID: titleID, assetID: Array(assetID.utf8), deviceID: deviceID, nowMilliseconds: nowMilliseconds)
    }

    /// The record to keep for a license the engine issued; nil unless its terms are dual expiry.
    package static func issued(terms: LicenseTerms, streamID: [UInt8], titleID: [UInt8], assetID: [UInt8], deviceID: [UInt8], nowMilliseconds: Int64)
        -> OfflineLicenseRecord?
    {
        guard case .dualExpiry(let storage, let playback, let version) = terms.duration else { return nil }
        return OfflineLicenseRecord(
            streamID: streamID, titleID: version == 2 ? titleID : nil, assetID: assetID, deviceID: deviceID, issuedAt: nowMilliseconds, storageSeconds: storage,
            playbackSeconds: playback)
    }

    /// The latest instant the storage duration allows (epoch ms); nil for no limit.
    package var storageDeadline: Int64? {
        storageSeconds == 0 ? nil : issuedAt + Int64(storageSeconds) * 1000
    }

    package var isActive: Bool { state == .active }
}
