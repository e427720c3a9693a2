import FairPlay
import FairPlayDevice
import Synchronization
import Testing

/// What the stand-in answers and what it saw.
struct StandInState {
    /// The ASk the simulated device used: the stand-in opens [SK..R1] with D(R2, ASk) as the real library
    /// would with the DASk it derives from provisioning data.
    var ask: [UInt8] = []
    /// `sessionKeyToUse` and `R1KeyToUse` to answer (SDK 26 struct only); nil echoes the request / answers generic.
    var sessionKeyAnswer: UInt64?
    var r1KeyAnswer: UInt64?
    /// Cut the content key TLLV payload to this many bytes.
    var payloadLength: Int?
    var calls: [RecordedCall] = []

    struct RecordedCall {
        var words: [UInt64]
        var skR1Video: [UInt8]
        var r2Video: [UInt8]
    }
}

let standInState = Mutex(StandInState())

/// An in-process `KSMCreateKeyPayload` for tests: reads the struct as Apple's library would (26 fields
/// for version 1, 32 for version 2), opens [SK..R1] with the legacy D function and answers like the library.
func standInCreateKeyPayload(_ raw: UnsafeMutableRawPointer) -> Int32 {
    let state = standInState.withLock { $0 }
    let version = raw.load(as: UInt64.self)
    guard version == 1 || version == 2 else { return -42585 }
    let count = version == 2 ? 32 : 26
    let words = raw.assumingMemoryBound(to: UInt64.self)
    func bytes(_ pointer: Int, _ length: Int) -> [UInt8] {
        guard let start = UnsafeRawPointer(bitPattern: UInt(words[pointer])) else { return [] }
        return Array(UnsafeRawBufferPointer(start: start, count: Int(words[length])))
    }
    func write(_ value: [UInt8], _ pointer: Int, _ length: Int) {
        precondition(value.count <= Int(words[length]), "stand-in output larger than the caller's buffer")
        UnsafeMutableRawPointer(bitPattern: UInt(words[pointer]))!.copyMemory(from: value, byteCount: value.count)
        words[length] = UInt64(value.count)
    }
    let skR1 = bytes(6, 7)
    guard skR1.count == 112, let dask = try? DFunction.derivedApplicationSecretKey(r2: bytes(8, 9), ask: state.ask),
        let plain = try? FairPlayCrypto.aes128CBCDecrypt(key: dask, iv: skR1.prefix(16), skR1.dropFirst(16))
    else { return -42585 }
    guard Array(plain[80..<96]) == bytes(10, 11) else { return -42589 }
    guard let encryptedKey = try? FairPlayCrypto.aes128ECBEncrypt(key: plain[0..<16], bytes(1, 2)) else { return -42601 }
    var value = bytes(3, 4) + encryptedKey
    if let cut = state.payloadLength { value = Array(value.prefix(cut)) }
    words[21] = TLLVTag.encryptedContentKey.rawValue
    write(value, 22, 23)
    write(Array(plain[16..<36]), 19, 20)
    write(Array(plain[36..<80]), 24, 25)
    var call = StandInState.RecordedCall(words: Array(UnsafeBufferPointer(start: words, count: count)), skR1Video: [], r2Video: [])
    if version == 2 {
        call.skR1Video = bytes(26, 27)
        call.r2Video = bytes(28, 29)
        words[30] = state.sessionKeyAnswer ?? words[30]
        words[31] = state.r1KeyAnswer ?? 1
    }
    standInState.withLock { $0.calls.append(call) }
    return 0
}

/// The library path end to end with the stand-in in place of Apple's binary: which fields go in, how
/// the answer shapes the CKC, and that the simulated device opens it.
@Suite("libfpscrypto through a stand-in", .serialized) struct FPSCryptoLibraryStandInTests {
    static let contentKey = [UInt8](repeating: 0x3B, count: 16)
    static let contentIV = [UInt8](repeating: 0x42, count: 16)

    func server(_ generation: FPSCryptoLibrary.Generation, _ state: StandInState = StandInState()) throws -> KeyServerModule {
        var state = state
        state.ask = Fixtures.testASk
        standInState.withLock { $0 = state }
        let library = FPSCryptoLibrary(generation: generation, standIn: standInCreateKeyPayload)
        let plain = try Fixtures.testCredential()
        let credential = try ApplicationCredential(
            name: "provisioned", certificateDER: plain.certificateDER, privateKey1024: plain.privateKey1024,
            privateKey2048: plain.privateKey2048, sessionKeySource: .cryptoLibrary(library, provisioningData: [0xF0, 0x0D]))
        return KeyServerModule(credentials: try CredentialStore([credential]))
    }

    func spc(version: UInt32) throws -> (spc: [UInt8], session: DeviceSession) {
        var o = SPCOptions()
        o.spcVersion = version
        if version == 3 {
            o.overrideValues[.sessionKeyR1V3] = [UInt8](repeating: 0xA5, count: 144)
            o.overrideValues[.r2V3] = [UInt8](repeating: 0x3C, count: 32)
        }
        return try SimulatedDevice(trust: try Fixtures.testTrust()).makeSPC(o)
    }

    static var lastCall: StandInState.RecordedCall? { standInState.withLock { $0.calls.last } }

    @Test("SDK 26, v3 SPC, cbcs video: the video TLLVs and a video request go in; a video answer makes a CKC version 2 naming the video key")
    func videoKey() throws {
        let server = try server(.sdk26, StandInState(sessionKeyAnswer: 2, r1KeyAnswer: 2))
        let (spc, session) = try spc(version: 3)
        let request = try server.open(spc)
        let content = CKCContent(contentKey: Self.contentKey, contentIV: Self.contentIV, libraryContentType: 1, encryptionScheme: .cbcs)
        let ckc = try server.makeCKC(for: request, content)

        let call = try #require(Self.lastCall)
        #expect(call.words.count == 32 && call.words[0] == 2)
        #expect(call.skR1Video == [UInt8](repeating: 0xA5, count: 144))
        #expect(call.r2Video == [UInt8](repeating: 0x3C, count: 32))
        #expect(call.words[30] == 2, "sessionKeyToUse asked for video")
        #expect(call.words[16] == 2 && call.words[18] == 20, "provisioning data bytes and the 20-byte SHA-1 certificate hash")
        #expect(Array(ckc.prefix(4)) == [0, 0, 0, 2], "CKC container version")
        let opened = try CKCOpener.open(ckc, session: session)
        #expect(opened.sessionKeyKind == SessionKeyKind.video.rawValue)
        #expect(opened.contentKey == Self.contentKey)
    }

    @Test("SDK 26, v3 SPC, cenc or unstated scheme: generic is asked for; a generic answer makes CKC version 1", arguments: [EncryptionScheme.cencV1, nil])
    func genericKey(scheme: EncryptionScheme?) throws {
        let server = try server(.sdk26)
        let (spc, session) = try spc(version: 3)
        let ckc = try server.makeCKC(for: try server.open(spc), CKCContent(contentKey: Self.contentKey, contentIV: Self.contentIV, encryptionScheme: scheme))
        #expect(Self.lastCall?.words[30] == 1)
        #expect(Array(ckc.prefix(4)) == [0, 0, 0, 1])
        #expect(try CKCOpener.open(ckc, session: session).contentKey == Self.contentKey)
    }

    @Test("SDK 5.1: a v2 SPC gets a version 1 struct of 26 fields and a CKC version 1; a v3 SPC is notImplementedErr naming the generation")
    func sdk5() throws {
        let server = try server(.sdk5)
        let (spc, session) = try spc(version: 2)
        let ckc = try server.makeCKC(for: try server.open(spc), CKCContent(contentKey: Self.contentKey, contentIV: Self.contentIV, encryptionScheme: .cbcs))
        #expect(Self.lastCall?.words.count == 26 && Self.lastCall?.words[0] == 1)
        #expect(Array(ckc.prefix(4)) == [0, 0, 0, 1])
        #expect(try CKCOpener.open(ckc, session: session).contentKey == Self.contentKey)
        let v3 = try self.spc(version: 3).spc
        do {
            _ = try server.open(v3)
            Issue.record("SDK 5.1's library opened a v3 SPC")
        } catch {
            #expect(error.status == .notImplemented && error.reason.contains("SDK 26") && error.reason.contains("sdk5"), "\(error)")
        }
    }

    @Test("A content key TLLV payload of 16 bytes or less from the library is internalErr")
    func shortPayload() throws {
        let server = try server(.sdk26, StandInState(payloadLength: 16))
        let v2 = try spc(version: 2).spc
        do {
            _ = try server.open(v2)
            Issue.record("a 16-byte content key payload was accepted")
        } catch {
            #expect(error.status == .internalError, "\(error)")
        }
    }
}
