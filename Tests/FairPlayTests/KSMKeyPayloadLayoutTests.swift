import FairPlay
import Testing

/// The `KSMKeyPayload` words handed to Apple's libfpscrypto, field by field against fps-facts.md
/// ("Session key: three ways", way 3): the indices below are written out from that list, not taken
/// from the code's own enum, so a field moved in the code fails here.
@Suite("KSMKeyPayload layout") struct KSMKeyPayloadLayoutTests {
    /// Distinct fake addresses and sizes, never dereferenced.
    static func buffer(_ address: UInt, _ count: Int) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: count)
    }
    static func mutableBuffer(_ address: UInt, _ count: Int) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: count)
    }

    static func inputs(video: Bool) -> KSMKeyPayloadFields.Inputs {
        KSMKeyPayloadFields.Inputs(
            contentKey: buffer(0x1000, 16), contentIV: buffer(0x2000, 16), contentType: 1,
            skR1: buffer(0x3000, 112), r2: buffer(0x4000, 21), r1Integrity: buffer(0x5000, 16),
            supportedKeyFormats: UnsafeBufferPointer(start: UnsafePointer(bitPattern: 0x6000), count: 2), cryptoVersionUsed: 1,
            provisioningData: buffer(0x7000, 1234), certHash: buffer(0x8000, 20),
            clientHU: mutableBuffer(0x9000, 20), contentKeyTLLVPayload: mutableBuffer(0xA000, 1024), r1: mutableBuffer(0xB000, 44),
            skR1Video: video ? buffer(0xC000, 144) : nil, r2Video: buffer(0xD000, 32),
            sessionKeyToUse: 2)
    }

    /// fps-facts.md's first 26 fields, in order, with the values `inputs` should put there.
    static let first26: [(index: Int, name: String, value: UInt64)] = [
        (1, "contentKey", 0x1000), (2, "contentKeyLength", 16), (3, "contentIV", 0x2000), (4, "contentIVLength", 16),
        (5, "contentType", 1), (6, "SK_R1", 0x3000), (7, "SK_R1Length", 112), (8, "R2", 0x4000), (9, "R2Length", 21),
        (10, "R1Integrity", 0x5000), (11, "R1IntegrityLength", 16), (12, "supportedKeyFormats", 0x6000),
        (13, "numberOfSupportedKeyFormats", 2), (14, "cryptoVersionUsed", 1), (15, "provisioningData", 0x7000),
        (16, "provisioningDataLength", 1234), (17, "certHash", 0x8000), (18, "certHashLength", 20),
        (19, "clientHU", 0x9000), (20, "clientHULength", 20), (21, "contentKeyTLLVTag", 0),
        (22, "contentKeyTLLVPayload", 0xA000), (23, "contentKeyTLLVPayloadLength", 1024), (24, "R1", 0xB000), (25, "R1Length", 44),
    ]

    @Test("SDK 26: struct version 2, 32 fields, the video session key fields at 26-31")
    func sdk26() {
        let fields = KSMKeyPayloadFields(generation: .sdk26, inputs: Self.inputs(video: true))
        #expect(fields.words.count == 32)
        #expect(fields.words[0] == 2, "version")
        for field in Self.first26 { #expect(fields.words[field.index] == field.value, "\(field.name) at \(field.index)") }
        #expect(fields.words[26] == 0xC000, "SK_R1Video")
        #expect(fields.words[27] == 144, "SK_R1VideoLength")
        #expect(fields.words[28] == 0xD000, "R2Video")
        #expect(fields.words[29] == 32, "R2VideoLength")
        #expect(fields.words[30] == 2, "sessionKeyToUse (in)")
        #expect(fields.words[31] == 1, "R1KeyToUse starts generic")
    }

    @Test("SDK 26: without both video TLLVs the video fields are null pointers and zero lengths")
    func sdk26WithoutVideo() {
        let fields = KSMKeyPayloadFields(generation: .sdk26, inputs: Self.inputs(video: false))
        #expect(fields.words.count == 32)
        #expect(Array(fields.words[26...29]) == [0, 0, 0, 0])
    }

    @Test("SDK 5.1: struct version 1 and exactly 26 fields, nothing written past them")
    func sdk5() {
        let fields = KSMKeyPayloadFields(generation: .sdk5, inputs: Self.inputs(video: true))
        #expect(fields.words.count == 26)
        #expect(fields.words[0] == 1, "version")
        for field in Self.first26 { #expect(fields.words[field.index] == field.value, "\(field.name) at \(field.index)") }
        #expect(fields[.skR1Video] == nil && fields[.r1KeyToUse] == nil)
    }

    @Test("Generations by name: sdk26 (the default) and sdk5; anything else is refused")
    func generationNames() {
        #expect(FPSCryptoLibrary.Generation(name: "sdk26") == .sdk26)
        #expect(FPSCryptoLibrary.Generation(name: "sdk5") == .sdk5)
        #expect(FPSCryptoLibrary.Generation.default == .sdk26)
        #expect(FPSCryptoLibrary.Generation(name: "sdk4") == nil)
        #expect(FPSCryptoLibrary.Generation(name: "SDK26") == nil)
    }

    @Test("SDK 26's rule for the video session key: both v3 TLLVs, protocol version 1, cbcs, video")
    func videoKeyRule() {
        func ask(_ video: Bool = true, _ version: UInt32? = 1, _ scheme: EncryptionScheme? = .cbcs, _ type: UInt64 = 1) -> UInt64 {
            KSMKeyPayloadFields.requestedSessionKey(hasVideoTLLVs: video, protocolVersionUsed: version, encryptionScheme: scheme, contentType: type)
        }
        #expect(ask() == 2)
        #expect(ask(false) == 1)
        #expect(ask(true, 2) == 1)
        #expect(ask(true, nil) == 1)
        #expect(ask(true, 1, .cencV1) == 1)
        #expect(ask(true, 1, nil) == 1)
        #expect(ask(true, 1, .cbcs, 3) == 1)
        #expect(ask(true, 1, .cbcs, 0) == 1)
    }
}
