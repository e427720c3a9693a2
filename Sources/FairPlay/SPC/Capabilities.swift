/// The capabilities TLLV (guide table 3-1): two big-endian u64s, feature bits in the low one.
package struct Capabilities: Hashable, Sendable {
    package var high: UInt64
    package var low: UInt64

    package init(high: UInt64 = 0, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Bit 0: the device enforces the HDCP enforcement TLLV (needed for HDCP type 1).
    package var hdcpEnforcement: Bool { low & 1 != 0 }
    /// Bit 1: offline key support as SDK 26 names the bit; its `checkSupportedFeatures` reads it as dual
    /// expiry support, which no CKC TLLV depends on. The offline key TLLV itself needs bit 3
    /// (``OfflineDelivery``).
    package var offlineKey: Bool { low & 2 != 0 }
    /// Bit 2: secure invalidation requests.
    package var secureInvalidation: Bool { low & 4 != 0 }
    /// Bit 3: offline key TLLV, versions 1 and 2 (SDK 26 `supportsOfflineKeyTLLV` and its v2 flag).
    package var offlineKeyV2: Bool { low & 8 != 0 }
    /// Bit 4: enforces security level Baseline.
    package var securityLevelBaseline: Bool { low & 16 != 0 }
    /// Bit 5: enforces security level Main.
    package var securityLevelMain: Bool { low & 32 != 0 }

    package static let hdcpEnforcementBit: UInt64 = 1 << 0
    package static let offlineKeyBit: UInt64 = 1 << 1
    package static let secureInvalidationBit: UInt64 = 1 << 2
    package static let offlineKeyV2Bit: UInt64 = 1 << 3
    package static let securityLevelBaselineBit: UInt64 = 1 << 4
    package static let securityLevelMainBit: UInt64 = 1 << 5

    /// The names of the feature bits that are set, for reports.
    package var featureNames: [String] {
        var names: [String] = []
        if hdcpEnforcement { names.append("hdcp-enforcement") }
        if offlineKey { names.append("offline-key") }
        if secureInvalidation { names.append("secure-invalidation") }
        if offlineKeyV2 { names.append("offline-key-v2") }
        if securityLevelBaseline { names.append("security-level-baseline") }
        if securityLevelMain { names.append("security-level-main") }
        return names
    }
}
