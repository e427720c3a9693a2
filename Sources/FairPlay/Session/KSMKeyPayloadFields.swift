/// The `KSMKeyPayload` struct of Apple's libfpscrypto as the eight-byte words the KSM hands to
/// `KSMCreateKeyPayload`, built from addresses and values so its layout can be tested without the library.
///
/// fps-facts.md lists the 32 fields in order; every field is a u64 or a pointer. A generation's words
/// are exactly ``FPSCryptoLibrary/Generation/fieldCount`` long: SDK 5.1's library must not be handed
/// fields it does not know, so nothing is written past field 25 for it.
package struct KSMKeyPayloadFields {
    /// Field indices (fps-facts.md, "Session key", way 3).
    package enum Index: Int, CaseIterable, Sendable {
        case version = 0
        case contentKey, contentKeyLength, contentIV, contentIVLength, contentType
        case skR1, skR1Length, r2, r2Length, r1Integrity, r1IntegrityLength
        case supportedKeyFormats, numberOfSupportedKeyFormats, cryptoVersionUsed
        case provisioningData, provisioningDataLength, certHash, certHashLength
        case clientHU, clientHULength, contentKeyTLLVTag, contentKeyTLLVPayload, contentKeyTLLVPayloadLength
        case r1, r1Length
        // SDK 26 only (struct version 2).
        case skR1Video, skR1VideoLength, r2Video, r2VideoLength, sessionKeyToUse, r1KeyToUse
    }

    /// `sessionKeyToUse` (in/out) and `R1KeyToUse` (out) values of SDK 26's library.
    package enum KeyChoice {
        package static let generic: UInt64 = 1
        package static let video: UInt64 = 2
    }

    /// What goes into one call. Every buffer must stay valid (and the output buffers writable) for as
    /// long as the words built from it are in use: the words hold their addresses.
    package struct Inputs {
        package var contentKey: UnsafeRawBufferPointer
        package var contentIV: UnsafeRawBufferPointer
        /// 0 unknown, 1 video, 3 audio.
        package var contentType: UInt64
        /// The [SK..R1] TLLV value.
        package var skR1: UnsafeRawBufferPointer
        package var r2: UnsafeRawBufferPointer
        package var r1Integrity: UnsafeRawBufferPointer
        package var supportedKeyFormats: UnsafeBufferPointer<UInt64>
        /// The protocol version used TLLV's value.
        package var cryptoVersionUsed: UInt64
        /// The provisioning data file's bytes, as Apple's SDK reads it.
        package var provisioningData: UnsafeRawBufferPointer
        /// SHA-1 of the Application Certificate (20 bytes), also for SPC version 3.
        package var certHash: UnsafeRawBufferPointer
        /// Output buffers; their sizes go in as capacities.
        package var clientHU: UnsafeMutableRawBufferPointer
        package var contentKeyTLLVPayload: UnsafeMutableRawBufferPointer
        package var r1: UnsafeMutableRawBufferPointer
        /// [SK..R1] v3 and R2 v3 values; only written for SDK 26, and only when both are non-nil.
        package var skR1Video: UnsafeRawBufferPointer?
        package var r2Video: UnsafeRawBufferPointer?
        /// ``KeyChoice/generic`` or ``KeyChoice/video``; only written for SDK 26.
        package var sessionKeyToUse: UInt64

        package init(
            contentKey: UnsafeRawBufferPointer, contentIV: UnsafeRawBufferPointer, contentType: UInt64,
            skR1: UnsafeRawBufferPointer, r2: UnsafeRawBufferPointer, r1Integrity: UnsafeRawBufferPointer,
            supportedKeyFormats: UnsafeBufferPointer<UInt64>, cryptoVersionUsed: UInt64,
            provisioningData: UnsafeRawBufferPointer, certHash: UnsafeRawBufferPointer,
            clientHU: UnsafeMutableRawBufferPointer, contentKeyTLLVPayload: UnsafeMutableRawBufferPointer, r1: UnsafeMutableRawBufferPointer,
            skR1Video: UnsafeRawBufferPointer?, r2Video: UnsafeRawBufferPointer?, sessionKeyToUse: UInt64
        ) {
            self.contentKey = contentKey
            self.contentIV = contentIV
            self.contentType = contentType
            self.skR1 = skR1
            self.r2 = r2
            self.r1Integrity = r1Integrity
            self.supportedKeyFormats = supportedKeyFormats
            self.cryptoVersionUsed = cryptoVersionUsed
            self.provisioningData = provisioningData
            self.certHash = certHash
            self.clientHU = clientHU
            self.contentKeyTLLVPayload = contentKeyTLLVPayload
            self.r1 = r1
            self.skR1Video = skR1Video
            self.r2Video = r2Video
            self.sessionKeyToUse = sessionKeyToUse
        }
    }

    package let generation: FPSCryptoLibrary.Generation
    /// Exactly `generation.fieldCount` words; the library writes its outputs back into them.
    package var words: [UInt64]

    /// Lays out one call's struct for `generation`.
    package init(generation: FPSCryptoLibrary.Generation, inputs: Inputs) {
        self.generation = generation
        words = [UInt64](repeating: 0, count: generation.fieldCount)
        func address(_ p: UnsafeRawPointer?) -> UInt64 { UInt64(UInt(bitPattern: p)) }
        set(.version, generation.structVersion)
        set(.contentKey, address(inputs.contentKey.baseAddress))
        set(.contentKeyLength, UInt64(inputs.contentKey.count))
        set(.contentIV, address(inputs.contentIV.baseAddress))
        set(.contentIVLength, UInt64(inputs.contentIV.count))
        set(.contentType, inputs.contentType)
        set(.skR1, address(inputs.skR1.baseAddress))
        set(.skR1Length, UInt64(inputs.skR1.count))
        set(.r2, address(inputs.r2.baseAddress))
        set(.r2Length, UInt64(inputs.r2.count))
        set(.r1Integrity, address(inputs.r1Integrity.baseAddress))
        set(.r1IntegrityLength, UInt64(inputs.r1Integrity.count))
        set(.supportedKeyFormats, address(inputs.supportedKeyFormats.baseAddress))
        set(.numberOfSupportedKeyFormats, UInt64(inputs.supportedKeyFormats.count))
        set(.cryptoVersionUsed, inputs.cryptoVersionUsed)
        set(.provisioningData, address(inputs.provisioningData.baseAddress))
        set(.provisioningDataLength, UInt64(inputs.provisioningData.count))
        set(.certHash, address(inputs.certHash.baseAddress))
        set(.certHashLength, UInt64(inputs.certHash.count))
        set(.clientHU, address(inputs.clientHU.baseAddress))
        set(.clientHULength, UInt64(inputs.clientHU.count))
        // contentKeyTLLVTag is output only: left 0.
        set(.contentKeyTLLVPayload, address(inputs.contentKeyTLLVPayload.baseAddress))
        set(.contentKeyTLLVPayloadLength, UInt64(inputs.contentKeyTLLVPayload.count))
        set(.r1, address(inputs.r1.baseAddress))
        set(.r1Length, UInt64(inputs.r1.count))
        guard generation.hasVideoSessionKey else { return }
        // SDK 26's createContentKeyPayload passes the video TLLVs only when both are present, else null
        // pointers and zero lengths; R1KeyToUse starts as generic.
        if let skR1Video = inputs.skR1Video, let r2Video = inputs.r2Video {
            set(.skR1Video, address(skR1Video.baseAddress))
            set(.skR1VideoLength, UInt64(skR1Video.count))
            set(.r2Video, address(r2Video.baseAddress))
            set(.r2VideoLength, UInt64(r2Video.count))
        }
        set(.sessionKeyToUse, inputs.sessionKeyToUse)
        set(.r1KeyToUse, KeyChoice.generic)
    }

    /// A field's word; nil when this generation's struct does not have it.
    package subscript(_ index: Index) -> UInt64? {
        index.rawValue < words.count ? words[index.rawValue] : nil
    }

    private mutating func set(_ index: Index, _ value: UInt64) {
        words[index.rawValue] = value
    }

    /// The `sessionKeyToUse` SDK 26 asks for: video only when the SPC carries both [SK..R1] v3 and R2 v3,
    /// its protocol version used is 1, the content is video and encrypted with cbcs (other schemes can
    /// encrypt slice headers, which the video key cannot open); generic otherwise.
    package static func requestedSessionKey(
        hasVideoTLLVs: Bool, protocolVersionUsed: UInt32?, encryptionScheme: EncryptionScheme?, contentType: UInt64
    ) -> UInt64 {
        guard hasVideoTLLVs, protocolVersionUsed == 1, encryptionScheme == .cbcs, contentType == 1 else { return KeyChoice.generic }
        return KeyChoice.video
    }
}
