import FairPlay

/// What a device keeps after sending an SPC, to open the CKC that answers it.
public struct DeviceSession: Sendable {
    public let sessionKey: [UInt8]
    public let hu: [UInt8]
    public let r1: [UInt8]
    public let antiReplaySeed: [UInt8]
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
