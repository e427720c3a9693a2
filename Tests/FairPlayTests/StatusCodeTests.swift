import FairPlay
import FairPlayDevice
import Testing

/// One refusal test for each status code Apple's KSM defines, each through the real server.
@Suite struct StatusCodeTests {
    static let key = [UInt8](repeating: 0x11, count: 16)
    static let iv = [UInt8](repeating: 0x22, count: 16)

    func device() throws -> SimulatedDevice { SimulatedDevice(trust: try Fixtures.testTrust()) }

    func expectOpen(_ status: FairPlayStatus, _ spc: [UInt8], server: KeyServerModule? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let server = try server ?? Fixtures.testServer()
        do {
            _ = try server.open(spc)
            Issue.record("expected \(status), but the SPC opened", sourceLocation: sourceLocation)
        } catch {
            #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
            #expect(!error.reason.isEmpty, sourceLocation: sourceLocation)
        }
    }

    func expectCKC(_ status: FairPlayStatus, options: SPCOptions = SPCOptions(), _ content: CKCContent, sourceLocation: SourceLocation = #_sourceLocation)
        throws
    {
        let server = try Fixtures.testServer()
        let request = try server.open(try device().makeSPC(options).spc)
        do {
            _ = try server.makeCKC(for: request, content)
            Issue.record("expected \(status), but a CKC was built", sourceLocation: sourceLocation)
        } catch {
            #expect(error.status == status, "\(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("spcVersionErr: an SPC container version other than 1 or 2")
    func spcVersion() throws {
        var spc = try device().makeSPC().spc
        spc[3] = 7
        try expectOpen(.spcVersionError, spc)
    }

    @Test("notImplementedErr: SPC version 3 without Apple's library, and a missing libfpscrypto")
    func notImplemented() throws {
        var o = SPCOptions()
        o.spcVersion = 3
        try expectOpen(.notImplemented, try device().makeSPC(o).spc)
        #expect { try FPSCryptoLibrary(path: "/nonexistent/libfpscrypto.so") } throws: { ($0 as? FairPlayError)?.status == .notImplemented }
    }

    @Test("paramErr (SDK 26 parseSPCContainer, decryptSPCData, readNextTLLV): truncated SPC, payload length lie, a trailing byte, a block past the payload")
    func containerParam() throws {
        let spc = try device().makeSPC().spc
        try expectOpen(.parameterError, Array(spc.prefix(100)))
        try expectOpen(.parameterError, Array(spc.dropLast(16)))
        try expectOpen(.parameterError, spc + [0])
        // The payload length (bytes 300..<304, big-endian) claims one block more than there is. The
        // whole 32-bit field is rewritten: adding to its low byte alone wrapped in 1 SPC of 16 and
        // made the length shorter instead.
        var lie = spc
        let length = lie[300..<304].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } + 16
        lie.replaceSubrange(300..<304, with: withUnsafeBytes(of: length.bigEndian) { Array($0) })
        try expectOpen(.parameterError, lie)
        var o = SPCOptions()
        o.payloadTransform = { payload in
            // Make the first block's declared length run past the payload.
            var p = payload
            p[8] = 0x7F
            return p
        }
        try expectOpen(.parameterError, try device().makeSPC(o).spc)
    }

    @Test("A whole trailing block after the declared payload is ignored, as SDK 26 ignores it")
    func trailingBlockIgnored() throws {
        let spc = try device().makeSPC().spc
        #expect(throws: Never.self) { try Fixtures.testServer().open(spc + [UInt8](repeating: 0x42, count: 16)) }
    }

    @Test("parserErr: a wrong fixed TLLV size, and a payload with no TLLV")
    func parser() throws {
        var o = SPCOptions()
        o.overrideValues[.transactionID] = [1, 2, 3, 4, 5, 6, 7]
        try expectOpen(.parserError, try device().makeSPC(o).spc)
        o = SPCOptions()
        o.payloadTransform = { _ in [UInt8](repeating: 0, count: 16) }
        var empty = try device().makeSPC(o).spc
        // Declare a payload of 0 bytes: SDK 26's extractReturnTags finds no TLLV at all.
        empty.replaceSubrange(300..<304, with: [0, 0, 0, 0])
        try expectOpen(.parserError, empty)
    }

    @Test("invalidCertificateErr: a wrapped key that RSA-OAEP cannot open (SDK 26 decryptKeyRSACustom)")
    func rsaFailure() throws {
        var wrappedKey = try device().makeSPC().spc
        wrappedKey[30] ^= 0xFF
        try expectOpen(.invalidCertificate, wrappedKey)
    }

    @Test("missingRequiredTagErr: no R2, and a return request naming an absent tag")
    func missingTag() throws {
        var o = SPCOptions()
        o.omit = [.r2]
        try expectOpen(.missingRequiredTag, try device().makeSPC(o).spc)
        o = SPCOptions()
        o.returnRequest = [.streamingIndicator]
        try expectOpen(.missingRequiredTag, try device().makeSPC(o).spc)
    }

    @Test("paramErr: bad key size, offline key with a duration, missing key outside state 2")
    func parameter() throws {
        try expectCKC(.parameterError, CKCContent(contentKey: [1, 2, 3], contentIV: Self.iv))
        let offline = OfflineKey(version: 1, contentID: [UInt8](repeating: 1, count: 16), storageDuration: 10, playbackDuration: 10)
        try expectCKC(.parameterError, CKCContent(contentKey: Self.key, contentIV: Self.iv, keyDuration: .rental(10), offlineKey: offline))
        try expectCKC(.parameterError, CKCContent(contentKey: nil, contentIV: Self.iv))
    }

    @Test("memoryErr: an SPC above the size limit is refused before it is read")
    func memory() throws {
        try expectOpen(.memoryError, [UInt8](repeating: 0, count: SPCContainer.maximumSize + 1))
    }

    @Test("integrityErr: the [SK..R1] integrity TLLV disagrees")
    func integrity() throws {
        var o = SPCOptions()
        o.corruptIntegrity = true
        try expectOpen(.integrityError, try device().makeSPC(o).spc)
    }

    @Test("integrityErr: an ASk that is not the device's")
    func wrongASk() throws {
        let c = try Fixtures.testCredential()
        let wrong = try ApplicationCredential(
            name: "wrong", certificateDER: c.certificateDER, privateKey1024: c.privateKey1024, privateKey2048: c.privateKey2048,
            sessionKeySource: .applicationSecretKey([UInt8](repeating: 9, count: 16)))
        try expectOpen(.integrityError, try device().makeSPC().spc, server: KeyServerModule(credentials: try CredentialStore([wrong])))
    }

    @Test("versionErr only for a used version a deployment narrowed away; [1, 2] using 1 opens everywhere")
    func version() throws {
        var o = SPCOptions()
        o.protocolVersionsSupported = [1, 2]
        o.protocolVersionUsed = 1
        try expectOpen(.versionError, try device().makeSPC(o).spc, server: try Fixtures.testServer(versions: [2]))
        for versions in [[], [1], [1, 2]] as [[UInt32]] {
            #expect(throws: Never.self) { try Fixtures.testServer(versions: versions).open(try device().makeSPC(o).spc) }
        }
    }

    @Test("dupTagErr: a TLLV tag twice")
    func duplicate() throws {
        var o = SPCOptions()
        o.extraTLLVs = [(.assetID, Array("again".utf8))]
        try expectOpen(.duplicateTag, try device().makeSPC(o).spc)
    }

    @Test("clientSecurityLevelErr: HDCP type 1 to a client without HDCP enforcement")
    func clientSecurityLevel() throws {
        var o = SPCOptions()
        o.capabilities = Capabilities(low: 0)
        try expectCKC(.clientSecurityLevel, options: o, CKCContent(contentKey: Self.key, contentIV: Self.iv, hdcp: .type1))
    }

    @Test("invalidCertificateErr: an SPC for a certificate the server does not hold")
    func invalidCertificate() throws {
        try expectOpen(.invalidCertificate, try Fixtures.apple("FPS/spc1.bin"))
    }

    @Test("internalErr: a CKC for a legacy credential without a session key")
    func internalError() throws {
        // A session without SK can only come from Apple's library; with a legacy credential the builder
        // must refuse rather than emit a CKC without a content key.
        let server = try Fixtures.testServer()
        let request = try server.open(try device().makeSPC().spc)
        let broken = SPCRequest(
            container: request.container, payload: request.payload, secrets: SessionSecrets(sessionKey: nil, hu: request.hu, r1: request.secrets.r1),
            credential: request.credential)
        #expect { try server.makeCKC(for: broken, CKCContent(contentKey: Self.key, contentIV: Self.iv)) } throws: {
            ($0 as? FairPlayError)?.status == .internalError
        }
    }

    @Test("Every known status has Apple's name and its code")
    func namesAndCodes() {
        #expect(FairPlayStatus.allKnown.count == 13)
        #expect(Set(FairPlayStatus.allKnown.map(\.name)).count == 13)
        #expect(FairPlayStatus.integrityError.description == "integrityErr (-42589)")
    }
}
