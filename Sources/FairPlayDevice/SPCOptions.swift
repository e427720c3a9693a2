import FairPlay

/// Everything a simulated device can put into an SPC. Defaults make a plain SPC v2 of a current iPhone.
public struct SPCOptions: Sendable {
    /// 1 (1024-bit key), 2 (2048-bit key) or 3 (SDK 26: 2048-bit key, certificate SHA-256, AES-CMAC tag;
    /// also carries [SK..R1] v3 and R2 v3 with random values).
    public var spcVersion: UInt32 = 2
    public var assetID: [UInt8] = Array("skd://asset-1".utf8)
    public var transactionID: UInt64? = 0x0102_0304_0506_0708
    public var protocolVersionsSupported: [UInt32]? = [1]
    public var protocolVersionUsed: UInt32? = 1
    public var streamingIndicator: StreamingIndicator? = nil
    public var playback: MediaPlaybackInfo? = nil
    public var capabilities: Capabilities? = Capabilities(low: Capabilities.hdcpEnforcementBit | Capabilities.offlineKeyBit | Capabilities.secureInvalidationBit | Capabilities.offlineKeyV2Bit | Capabilities.securityLevelBaselineBit)
    public var deviceIdentity: DeviceIdentity? = DeviceIdentity(deviceClass: 2, vendorHash: 0x0a0b_0c0d_0e0f_1011, productHash: 0x1213_1415_1617_1819, fairPlayVersionREE: 0x0005_0001, fairPlayVersionTEE: 0x0005_0001, osVersion: 0x0011_0200)
    public var deviceInfo: DeviceInfo? = nil
    public var sync: SyncRequest? = nil
    public var kextDenyListVersion: UInt32? = nil
    public var securityLevelReport: SecurityLevelReport? = SecurityLevelReport(level: .baseline, kdlVersion: 0)
    public var vmDeviceInfo: VMDeviceInfo? = nil
    public var supportedKeyFormats: [UInt64]? = nil
    /// Tags the CKC must return unchanged; they must name TLLVs this SPC carries.
    public var returnRequest: [TLLVTag] = []
    /// Reserved TLLVs with tags the guide does not list, as Apple's SPCs carry; a KSM must skip them.
    public var reservedTLLVCount: Int = 3
    /// Extra random 16-byte padding blocks per TLLV, up to this many (the guide allows random extension).
    public var maximumExtraPadding: Int = 2
    /// Shuffle the TLLVs ("located in random sequence").
    public var shuffle: Bool = true

    // Fault injection for negative tests.
    /// TLLVs to leave out.
    public var omit: Set<TLLVTag> = []
    /// Values to send in place of the ones the device would compute.
    public var overrideValues: [TLLVTag: [UInt8]] = [:]
    /// Extra blocks appended as-is (a duplicate tag, say).
    public var extraTLLVs: [(TLLVTag, [UInt8])] = []
    /// Makes the [SK..R1] integrity TLLV disagree with the encrypted block.
    public var corruptIntegrity = false
    /// Rewrites the plaintext payload before encryption (length lies, truncation); its output is padded
    /// with zeros to a multiple of 16 so the container stays decryptable.
    public var payloadTransform: (@Sendable ([UInt8]) -> [UInt8])? = nil

    public init() {}
}
