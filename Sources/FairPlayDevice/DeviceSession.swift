import FairPlay

/// What a device keeps after sending an SPC, to open the CKC that answers it.
public struct DeviceSession: Sendable {
    /// The 16-byte session key (SK) the device chose; it opens the content key in the CKC.
    public let sessionKey: [UInt8]
    /// The device's 20-byte anonymized ID sent in the SPC.
    public let hu: [UInt8]
    /// The 44-byte R1 sent in [SK..R1]; the CKC must return it, and its SHA-1 keys the payload.
    public let r1: [UInt8]
    /// The 16-byte anti-replay seed sent in the SPC; encrypted under R1's hash it is the CKC payload key.
    public let antiReplaySeed: [UInt8]
    /// The asset ID the SPC asked a key for.
    public let assetID: [UInt8]
    /// The whole blocks the CKC must return unchanged, by tag.
    package let requestedBlocks: [TLLVTag: [UInt8]]
    package let capabilities: Capabilities?

    package init(
        sessionKey: [UInt8], hu: [UInt8], r1: [UInt8], antiReplaySeed: [UInt8], assetID: [UInt8], requestedBlocks: [TLLVTag: [UInt8]],
        capabilities: Capabilities?
    ) {
        self.sessionKey = sessionKey
        self.hu = hu
        self.r1 = r1
        self.antiReplaySeed = antiReplaySeed
        self.assetID = assetID
        self.requestedBlocks = requestedBlocks
        self.capabilities = capabilities
    }
}
