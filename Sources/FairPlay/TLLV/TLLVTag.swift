/// The 8-byte tag that opens every TLLV block. Values from the guide, corrected by fps-facts.md.
package struct TLLVTag: RawRepresentable, Hashable, Sendable, CustomStringConvertible, Comparable {
    package let rawValue: UInt64
    package init(rawValue: UInt64) { self.rawValue = rawValue }
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }

    package var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: 16 - hex.count) + hex
    }

    package static func < (lhs: TLLVTag, rhs: TLLVTag) -> Bool { lhs.rawValue < rhs.rawValue }

    // MARK: SPC (guide table 2-4, fps-facts.md)
    /// [SK..R1]; the guide's table drops a digit of this value.
    package static let sessionKeyR1 = TLLVTag(0x3d1a_10b8_bffa_c2ec)
    package static let sessionKeyR1Integrity = TLLVTag(0xb349_d480_9e91_0687)
    package static let antiReplaySeed = TLLVTag(0x89c9_0f12_2041_06b2)
    package static let r2 = TLLVTag(0x71b5_595a_c152_1133)
    package static let returnRequest = TLLVTag(0x19f9_d4e5_ab76_09cb)
    package static let assetID = TLLVTag(0x1bf7_f53f_5d5d_5a1f)
    package static let transactionID = TLLVTag(0x47aa_7ad3_4405_77de)
    package static let protocolVersionsSupported = TLLVTag(0x67b8_fb79_ecce_1a13)
    package static let protocolVersionUsed = TLLVTag(0x5d81_bcbc_c7f6_1703)
    /// Streaming indicator; the guide's table drops a digit of this value.
    package static let streamingIndicator = TLLVTag(0xabb0_256a_3184_3974)
    package static let mediaPlaybackState = TLLVTag(0xeb8e_fdf2_b25a_b3a0)
    package static let capabilities = TLLVTag(0x9c02_af32_53c0_7fb2)
    package static let deviceIdentity = TLLVTag(0x94c1_7cd6_76c6_9b59)
    package static let deviceInfo = TLLVTag(0xd43f_c6ab_c596_aae7)
    package static let sync = TLLVTag(0x7796_6de1_dc10_83ad)
    package static let kextDenyList = TLLVTag(0x70ec_a657_3388_e329)
    package static let securityLevelReport = TLLVTag(0xb18e_e16e_a50f_6c02)
    package static let vmDeviceInfo = TLLVTag(0x7564_40e2_4049_9f70)
    package static let supportedKeyFormats = TLLVTag(0x8d8e_84fa_6cc3_5eb7)
    /// [SK..R1] and R2 of SPC version 3 clients; their session key needs Apple's library.
    package static let sessionKeyR1V3 = TLLVTag(0x697a_f621_3858_562f)
    package static let r2V3 = TLLVTag(0xdb30_b89d_cb58_34b3)

    // MARK: CKC (guide table 2-11, fps-facts.md)
    package static let encryptedContentKey = TLLVTag(0x58b3_8165_af0e_3d5a)
    package static let r1 = TLLVTag(0xea74_c464_5d5e_fee9)
    package static let contentKeyDuration = TLLVTag(0x47ac_f6a4_18cd_091a)
    package static let requiredSecurityLevel = TLLVTag(0x644c_b1da_c031_3250)
    package static let offlineKey = TLLVTag(0x6375_d972_7060_218c)
    package static let hdcpEnforcement = TLLVTag(0x2e52_f153_0d8d_db4a)
    package static let sessionKeyVersionUsed = TLLVTag(0x42ca_089e_8e9f_a924)
    /// Appears in Apple's reference CKCs with an 8-byte value; ignored when parsing.
    package static let appleReservedCKC = TLLVTag(0xe6d0_a3e7_2c92_a4ef)

    /// Names of the tags this project knows, for `ksm inspect` and logs.
    package var name: String? { Self.names[self] }

    static let names: [TLLVTag: String] = [
        .sessionKeyR1: "sk-r1", .sessionKeyR1Integrity: "sk-r1-integrity", .antiReplaySeed: "anti-replay-seed",
        .r2: "r2", .returnRequest: "return-request", .assetID: "asset-id", .transactionID: "transaction-id",
        .protocolVersionsSupported: "protocol-versions-supported", .protocolVersionUsed: "protocol-version-used",
        .streamingIndicator: "streaming-indicator", .mediaPlaybackState: "media-playback-state",
        .capabilities: "capabilities", .deviceIdentity: "device-identity", .deviceInfo: "device-info",
        .sync: "sync", .kextDenyList: "kext-deny-list", .securityLevelReport: "security-level-report",
        .vmDeviceInfo: "vm-device-info", .supportedKeyFormats: "supported-key-formats",
        .sessionKeyR1V3: "sk-r1-v3", .r2V3: "r2-v3",
        .encryptedContentKey: "encrypted-content-key", .r1: "r1", .contentKeyDuration: "content-key-duration",
        .requiredSecurityLevel: "required-security-level", .offlineKey: "offline-key",
        .hdcpEnforcement: "hdcp-enforcement", .sessionKeyVersionUsed: "session-key-version-used",
        .appleReservedCKC: "apple-reserved",
    ]
}
