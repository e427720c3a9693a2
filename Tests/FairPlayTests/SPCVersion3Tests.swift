import FairPlay
import FairPlayDevice
import Testing

/// SPC version 3 (SDK 26) through the container: the simulator builds it, the server opens and checks it.
///
/// Offsets of a version 3 SPC: version 0..<4, reserved 4..<8, protocol UUID 8..<24, wrapped master key
/// 24..<280, certificate SHA-256 280..<312, length field 312..<328 (its u32 at 324..<328), encrypted
/// TLLVs from 328, then the 16-byte AES-CMAC tag.
@Suite("SPC version 3 container") struct SPCVersion3Tests {
    static let uuidRange = 8..<24
    static let wrappedKeyRange = 24..<280
    static let certificateHashRange = 280..<312
    static let lengthOffset = 324
    static let payloadOffset = 328

    static let videoSKR1 = [UInt8](repeating: 0xA5, count: 144)
    static let videoR2 = [UInt8](repeating: 0x3C, count: 32)

    func device() throws -> SimulatedDevice { SimulatedDevice(trust: try Fixtures.testTrust()) }

    static func options() -> SPCOptions {
        var o = SPCOptions()
        o.spcVersion = 3
        o.overrideValues[.sessionKeyR1V3] = videoSKR1
        o.overrideValues[.r2V3] = videoR2
        return o
    }

    func makeSPC() throws -> [UInt8] { try device().makeSPC(Self.options()).spc }

    func expectOpen(_ status: FairPlayStatus, _ spc: [UInt8], server: KeyServerModule? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let server = try server ?? Fixtures.testServer()
        do {
            _ = try server.open(spc)
            Issue.record("expected \(status), but the SPC opened", sourceLocation: sourceLocation)
        } catch {
            #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("A simulator v3 SPC opens through the container: the CMAC verifies and the TLLVs parse")
    func opensThroughContainer() throws {
        let spc = try makeSPC()
        let credential = try Fixtures.testCredential()
        let container = try SPCContainer.parse(spc[...])
        #expect(container.version == 3)
        #expect(Array(container.certificateHash) == credential.certificateSHA256)
        #expect(container.integrityTag.count == 16 && container.trailingBytes.isEmpty)
        #expect(container.encryptedPayload.count == spc.count - Self.payloadOffset - 16)
        #expect(try Fixtures.testServer().credentials.credential(forCertificateSHA256: container.certificateHash)?.name == credential.name)

        let plaintext = try container.decryptVersion3Payload(with: try #require(credential.privateKey2048))
        let payload = try SPCPayload(try TLLVList.parse(plaintext[...]))
        #expect(Array(payload.assetID) == SPCOptions().assetID)
        let video = try #require(payload.videoSessionKeyTLLVs)
        #expect(Array(video.skR1) == Self.videoSKR1)
        #expect(Array(video.r2) == Self.videoR2)
    }

    @Test("Without Apple's libfpscrypto a verified v3 SPC is notImplementedErr naming libfpscrypto, SDK 26 generation")
    func needsLibrary() throws {
        let server = try Fixtures.testServer()
        let spc = try makeSPC()
        do {
            _ = try server.open(spc)
            Issue.record("a v3 SPC opened without libfpscrypto")
        } catch {
            #expect(error.status == .notImplemented && error.status.rawValue == -42612)
            #expect(error.reason.contains("libfpscrypto") && error.reason.contains("SDK 26"), "\(error)")
        }
    }

    enum Region: String, CaseIterable, CustomTestStringConvertible {
        case wrappedKey, certificateHash, length, ciphertext, tag
        var testDescription: String { rawValue }
    }

    @Test(
        "A flipped bit: wrapped key or certificate hash → invalidCertificateErr (RSA, unknown SHA-256); length, ciphertext or tag → integrityErr",
        arguments: Region.allCases)
    func flippedBit(_ region: Region) throws {
        var spc = try makeSPC()
        let expected: FairPlayStatus
        switch region {
        case .wrappedKey:
            spc[Self.wrappedKeyRange.lowerBound + 100] ^= 0x01
            expected = .invalidCertificate
        case .certificateHash:
            spc[Self.certificateHashRange.lowerBound + 7] ^= 0x80
            expected = .invalidCertificate
        case .length:
            // Clear the lowest set bit of 16 or more: a shorter length that still fits, so only the tag can catch it.
            let length =
                UInt32(spc[Self.lengthOffset]) << 24 | UInt32(spc[Self.lengthOffset + 1]) << 16
                | UInt32(spc[Self.lengthOffset + 2]) << 8 | UInt32(spc[Self.lengthOffset + 3])
            let bit = (4..<32).first { length & (1 << $0) != 0 }!
            spc[Self.lengthOffset + 3 - bit / 8] ^= UInt8(1 << (bit % 8))
            expected = .integrityError
        case .ciphertext:
            spc[Self.payloadOffset + 40] ^= 0x10
            expected = .integrityError
        case .tag:
            spc[spc.count - 1] ^= 0x01
            expected = .integrityError
        }
        try expectOpen(expected, spc)
    }

    @Test("A protocol UUID other than SDK 26's is versionErr")
    func wrongUUID() throws {
        var spc = try makeSPC()
        spc[Self.uuidRange.lowerBound + 5] ^= 0x01
        try expectOpen(.versionError, spc)
    }

    @Test("Every truncation is paramErr, the 4-byte version field included (SDK 26 readBigEndianU32)")
    func truncations() throws {
        let spc = try makeSPC()
        let server = try Fixtures.testServer()
        for length in 0..<spc.count {
            let status: FairPlayStatus
            do {
                _ = try server.open(Array(spc.prefix(length)))
                Issue.record("a \(length)-byte prefix opened")
                continue
            } catch {
                status = error.status
            }
            // SDK 26 readBigEndianU32/readBytes: every short read, the version field's included, is paramErr.
            #expect(status == .parameterError, "prefix of \(length) bytes")
        }
    }

    @Test("A length that runs past the SPC, and bytes after the tag, are paramErr")
    func lengthAndTrailingBytes() throws {
        var spc = try makeSPC()
        spc[Self.lengthOffset + 2] &+= 1
        try expectOpen(.parameterError, spc)
        try expectOpen(.parameterError, try makeSPC() + [0])
        try expectOpen(.parameterError, try makeSPC() + [UInt8](repeating: 0, count: 16))
    }

    @Test("The 12 leading bytes of the length field are skipped, as SDK 26 skips them")
    func lengthPaddingSkipped() throws {
        var spc = try makeSPC()
        spc[Self.lengthOffset - 12] = 0xFF
        // Past the container: the answer is the one about the missing library, not a container error.
        try expectOpen(.notImplemented, spc)
    }

    @Test("A certificate this server does not hold is invalidCertificateErr")
    func unknownCertificate() throws {
        let server = KeyServerModule(credentials: try CredentialStore([try Fixtures.appleCredential()]))
        try expectOpen(.invalidCertificate, try makeSPC(), server: server)
    }

    @Test("SDK 26's size limits: [SK..R1] v3 over 256 bytes, R2 v3 over 64 bytes are parserErr")
    func videoTLLVSizes() throws {
        var o = Self.options()
        o.overrideValues[.sessionKeyR1V3] = [UInt8](repeating: 1, count: 257)
        try expectOpen(.parserError, try device().makeSPC(o).spc)
        o = Self.options()
        o.overrideValues[.r2V3] = [UInt8](repeating: 1, count: 65)
        try expectOpen(.parserError, try device().makeSPC(o).spc)
    }
}
