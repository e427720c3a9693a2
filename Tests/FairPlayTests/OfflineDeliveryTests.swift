import FairPlay
import Testing

/// The one offline rule both paths ask, against SDK 26's `checkSupportedFeatures` (bit 3 sets
/// `supportsOfflineKeyTLLV`, bit 1 only `supportsDualExpiry`) and `populateTagsCustom`.
@Suite("Offline delivery: SDK 26's rule")
struct OfflineDeliveryTests {
    @Test(
        "the offline key TLLV needs capability bit 3 and a playback state; bit 1 changes nothing",
        arguments: [
            (UInt64?.none, false), (0, false), (Capabilities.offlineKeyBit, false), (Capabilities.offlineKeyV2Bit, true),
            (Capabilities.offlineKeyBit | Capabilities.offlineKeyV2Bit, true), (Capabilities.hdcpEnforcementBit | Capabilities.secureInvalidationBit, false),
        ])
    func gate(bits: UInt64?, offlineKey: Bool) {
        let caps = bits.map { Capabilities(low: $0) }
        let withState = OfflineDelivery(storageSeconds: 100, playbackSeconds: 50, capabilities: caps, hasPlaybackState: true)
        if offlineKey {
            #expect(withState == .offlineKey)
        } else {
            #expect(withState == .contentKeyDuration(ContentKeyDuration(leaseSeconds: 0, rentalSeconds: 100, keyType: .persistableLimited)))
        }
        #expect(OfflineDelivery(storageSeconds: 100, playbackSeconds: 50, capabilities: caps, hasPlaybackState: false) == .noTerms)
    }

    @Test(
        "without bit 3 the key type is persistence-and-duration when either duration is set, persistence when neither is",
        arguments: [
            (UInt32(2_592_000), UInt32(86_400), ContentKeyDuration.KeyType.persistableLimited), (0, 86_400, .persistableLimited),
            (3600, 0, .persistableLimited), (0, 0, .persistableUnlimited),
        ])
    func keyType(storage: UInt32, playback: UInt32, type: ContentKeyDuration.KeyType) {
        let d = OfflineDelivery(
            storageSeconds: storage, playbackSeconds: playback, capabilities: Capabilities(low: Capabilities.offlineKeyBit), hasPlaybackState: true)
        // SDK 26 populateTagServerKeyDuration: lease 0, the rental (storage) duration, the type, 0x86d34a3a.
        #expect(d == .contentKeyDuration(ContentKeyDuration(leaseSeconds: 0, rentalSeconds: storage, keyType: type, reserved: 0x86d3_4a3a)))
    }
}
