import FairPlay

/// Everything a simulated device can put into an SPC. Defaults make an SPC v2 of a current iPhone:
/// versions supported [1, 2] with 1 used, supported key formats in Apple's layout, the encrypted
/// security level report, a tag return request (empty unless tags are asked for).
public struct SPCOptions: Sendable {
    /// 1 (1024-bit key), 2 (2048-bit key) or 3 (SDK 26: 2048-bit key, certificate SHA-256, AES-CMAC tag;
    /// also carries [SK..R1] v3 and R2 v3 with random values).
    public var spcVersion: UInt32 = 2
    /// The asset ID TLLV's bytes. Default: `skd://asset-1`.
    public var assetID: [UInt8] = Array("skd://asset-1".utf8)
    /// The transaction ID TLLV's value; nil sends none.
    public var transactionID: UInt64? = 0x0102_0304_0506_0708
    /// The protocol versions supported TLLV; nil sends none. Default: [1, 2].
    public var protocolVersionsSupported: [UInt32]? = [1, 2]
    /// The protocol version used TLLV; nil sends none. Default: 1.
    public var protocolVersionUsed: UInt32? = 1
    package var streamingIndicator: StreamingIndicator? = nil
    package var playback: MediaPlaybackInfo? = nil
    package var capabilities: Capabilities? = Capabilities(
        low: Capabilities.hdcpEnforcementBit | Capabilities.offlineKeyBit | Capabilities.secureInvalidationBit | Capabilities.offlineKeyV2Bit
            | Capabilities.securityLevelBaselineBit)
    package var deviceIdentity: DeviceIdentity? = DeviceIdentity(
        deviceClass: 2, vendorHash: 0x0a0b_0c0d_0e0f_1011, productHash: 0x1213_1415_1617_1819, fairPlayVersionREE: 0x0005_0001, fairPlayVersionTEE: 0x0005_0001,
        osVersion: 0x0011_0200)
    package var deviceInfo: DeviceInfo? = nil
    package var sync: SyncRequest? = nil
    /// The Kext Deny List version TLLV's value; nil (the default) sends none.
    public var kextDenyListVersion: UInt32? = nil
    /// A plaintext (version 1) security level report, as older clients send; nil sends none.
    public var securityLevelReport: SecurityLevelReport? = nil
    /// The 32-byte encrypted security level report current clients send (random bytes here: only the
    /// device and Apple can read it, and Apple's SDK 26 ignores it).
    public var encryptedSecurityLevelReport = true
    package var vmDeviceInfo: VMDeviceInfo? = nil
    /// Key formats, sent in Apple's layout `{version 1, reserved 0, count, formats}`; nil sends none.
    public var supportedKeyFormats: [UInt64]? = [TLLVTag.encryptedContentKey.rawValue]
    /// The version field of the supported key formats TLLV (Apple's KSM reads only version 1).
    public var supportedKeyFormatsVersion: UInt32 = 1
    /// Tags the CKC must return unchanged; they must name TLLVs this SPC carries. The TLLV itself is
    /// always sent (Apple's KSM requires it), empty when no tag is asked for.
    package var returnRequest: [TLLVTag] = []
    /// Reserved TLLVs with tags the guide does not list, as Apple's SPCs carry; a KSM must skip them.
    public var reservedTLLVCount: Int = 3
    /// Extra random 16-byte padding blocks per TLLV, up to this many (the guide allows random extension).
    public var maximumExtraPadding: Int = 2
    /// Shuffle the TLLVs ("located in random sequence").
    public var shuffle: Bool = true

    // Fault injection for negative tests.
    /// TLLVs to leave out.
    package var omit: Set<TLLVTag> = []
    /// Values to send in place of the ones the device would compute.
    package var overrideValues: [TLLVTag: [UInt8]] = [:]
    /// Extra blocks appended as-is (a duplicate tag, say).
    package var extraTLLVs: [(TLLVTag, [UInt8])] = []
    /// Makes the [SK..R1] integrity TLLV disagree with the encrypted block.
    public var corruptIntegrity = false
    /// Rewrites the plaintext payload before encryption (length lies, truncation); its output is padded
    /// with zeros to a multiple of 16 so the container stays decryptable.
    public var payloadTransform: (@Sendable ([UInt8]) -> [UInt8])? = nil

    /// The default SPC of a current iPhone (see the type's summary); set fields to vary it.
    public init() {}
}
