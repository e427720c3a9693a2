/// How one CKC carries the terms of an offline (download) license: the one rule that `ksm process`
/// (through ``CKCBuilder``) and the worker's policy engine both ask, so the reply, the offline record
/// and the CKC never disagree.
///
/// Apple's SDK 26: `checkSupportedFeatures` sets `supportsOfflineKeyTLLV` (and the v2 flag) only for
/// capability bit 3; bit 1 sets `supportsDualExpiry`, which no CKC TLLV reads. `populateTagsCustom`
/// sends terms only to an SPC with a media playback state, and then the offline key TLLV
/// (`populateTagServerOfflineKey`) to a bit-3 client and to any other client a content key duration
/// (`populateTagServerKeyDuration`) of `{lease 0, storage, persistence-and-duration}`, or
/// `persistence` when both durations are 0; the playback duration then has no field to travel in.
package enum OfflineDelivery: Hashable, Sendable {
    /// The offline key TLLV, with both durations.
    case offlineKey
    /// A content key duration TLLV of a persistable type, in place of the offline key.
    case contentKeyDuration(ContentKeyDuration)
    /// Neither TLLV: the SPC has no media playback state, so the key goes without terms.
    case noTerms

    /// Decides how offline terms of `storageSeconds` and `playbackSeconds` (0 = no limit) reach a
    /// client with `capabilities` (nil: the SPC has no capabilities TLLV, read as no bits).
    package init(storageSeconds: UInt32, playbackSeconds: UInt32, capabilities: Capabilities?, hasPlaybackState: Bool) {
        guard hasPlaybackState else {
            self = .noTerms
            return
        }
        if capabilities?.offlineKeyV2 == true {
            self = .offlineKey
            return
        }
        let limited = storageSeconds != 0 || playbackSeconds != 0
        self = .contentKeyDuration(
            ContentKeyDuration(leaseSeconds: 0, rentalSeconds: storageSeconds, keyType: limited ? .persistableLimited : .persistableUnlimited))
    }
}
