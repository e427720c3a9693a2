import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing
import Wire

/// One row of docs/apple-fidelity.md: an SPC (and what the request asks for) and the status Apple's
/// SDK 26 answers it with, checked through `ksm process`'s processor and the worker's policy path.
struct FidelityCase: Sendable, CustomTestStringConvertible {
    enum Content: String, Sendable { case sd, hd, uhd, lease }
    /// The rule's id in docs/apple-fidelity.md.
    var id: String
    var content: Content = .hd
    var checkIn = false
    var options: @Sendable (inout SPCOptions) -> Void = { _ in }
    var spc: @Sendable ([UInt8]) -> [UInt8] = { $0 }
    /// SDK 26's status for this input.
    var apple: FairPlayStatus
    /// False where the worker's policy layer answers with its own rule by design (the table says why).
    var worker = true
    var testDescription: String { id }
}

/// A payload of the given version, reserved field and security level, as a v1 report lays it out.
private func report(version: UInt32, reserved: UInt32 = 0, level: SecurityLevel, kdl: UInt32 = 0) -> [UInt8] {
    var v: [UInt8] = []
    v.appendBigEndian(version)
    v.appendBigEndian(reserved)
    v.appendBigEndian(level.rawValue)
    v.appendBigEndian(kdl)
    return v
}

private func words(_ values: [UInt32]) -> [UInt8] {
    var v: [UInt8] = []
    for w in values { v.appendBigEndian(w) }
    return v
}

private let play = MediaPlaybackInfo(creationDate: 1_700_000_000, state: .readyToPlay, sessionID: 42)

let fidelityCases: [FidelityCase] = [
    .init(id: "TLLV-SKF", options: { $0.supportedKeyFormats = [TLLVTag.encryptedContentKey.rawValue, 0x1234] }, apple: .noError),
    .init(id: "TLLV-SKF-LIMIT", options: { $0.supportedKeyFormats = Array(repeating: 7, count: 65) }, apple: .parameterError),
    .init(id: "TLLV-SKF-VERSION", options: { $0.supportedKeyFormatsVersion = 2 }, apple: .noError),
    .init(id: "TLLV-SLR-ENCRYPTED", content: .uhd, options: { $0.capabilities = Capabilities(low: Capabilities.hdcpEnforcementBit) }, apple: .noError),
    .init(
        id: "TLLV-SLR-RESERVED",
        options: {
            $0.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 0)
            $0.overrideValues[.securityLevelReport] = report(version: 1, reserved: 1, level: .main)
        }, apple: .parameterError),
    .init(
        id: "TLLV-SLR-VERSION", content: .uhd,
        options: {
            $0.encryptedSecurityLevelReport = false
            $0.overrideValues[.securityLevelReport] = report(version: 2, level: .baseline)
            $0.securityLevelReport = SecurityLevelReport(level: .baseline, kdlVersion: 0)
            $0.capabilities = Capabilities(low: Capabilities.hdcpEnforcementBit)
        }, apple: .noError),
    .init(id: "TLLV-CAPS-SIZE", options: { $0.overrideValues[.capabilities] = [UInt8](repeating: 0, count: 8) }, apple: .parameterError),
    .init(
        id: "TLLV-PLAYBACK-SIZE",
        options: {
            $0.playback = play
            $0.overrideValues[.mediaPlaybackState] = [UInt8](repeating: 1, count: 12)
        }, apple: .parameterError),
    .init(
        id: "TLLV-KDL-SIZE",
        options: {
            $0.overrideValues[.kextDenyList] = [0, 0, 0, 40, 0, 0, 0, 0]
            $0.kextDenyListVersion = 40
        }, apple: .parserError),
    .init(id: "TLLV-DEVID", options: { $0.overrideValues[.deviceIdentity] = [UInt8](repeating: 1, count: 35) }, apple: .parameterError),
    .init(
        id: "TLLV-VMINFO",
        options: {
            $0.vmDeviceInfo = VMDeviceInfo(
                version: 2, hostDeviceClass: 3, hostOSVersion: 1, hostVirtualizationProtocol: 1, guestDeviceClass: 3, guestOSVersion: 1,
                guestVirtualizationProtocol: 1)
        }, apple: .noError),
    .init(id: "TLLV-VSUPP-LIMIT", options: { $0.protocolVersionsSupported = Array(1...100) }, apple: .parameterError),
    .init(id: "TLLV-VSUPP-SIZE", options: { $0.overrideValues[.protocolVersionsSupported] = [0, 0, 1] }, apple: .parserError),
    .init(id: "TLLV-VUSED-SIZE", options: { $0.overrideValues[.protocolVersionUsed] = [0, 0, 0, 0, 1] }, apple: .parserError),
    .init(
        id: "TLLV-STREAMIND-SIZE",
        options: {
            $0.streamingIndicator = .airPlay
            $0.overrideValues[.streamingIndicator] = [UInt8](repeating: 1, count: 16)
        }, apple: .parserError),
    .init(id: "TLLV-RETREQ-SIZE", options: { $0.overrideValues[.returnRequest] = [1, 2, 3, 4] }, apple: .parserError),
    .init(id: "TLLV-SKR1V3", options: { $0.extraTLLVs = [(.sessionKeyR1V3, [UInt8](repeating: 3, count: 257))] }, apple: .parserError),
    .init(id: "TLLV-R2V3", options: { $0.extraTLLVs = [(.r2V3, [UInt8](repeating: 3, count: 65))] }, apple: .parserError),
    .init(id: "TLLV-DUP", options: { $0.extraTLLVs = [(TLLVTag(0x1234_5678_9abc_def0), [1]), (TLLVTag(0x1234_5678_9abc_def0), [2])] }, apple: .duplicateTag),
    .init(
        id: "TLLV-SYNC-V1",
        options: {
            $0.overrideValues[.sync] = words([1, 1, 0, 0, 0, 0, 0])
            $0.sync = .v1(SyncV1(contentID: [], durationToExpiry: 0))
        }, apple: .parameterError),
    .init(
        id: "TLLV-SYNC-V2-RECORDS",
        options: {
            $0.overrideValues[.sync] = words([2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 251])
            $0.sync = .v1(SyncV1(contentID: [], durationToExpiry: 0))
        }, apple: .internalError),
    .init(
        id: "TLLV-SYNC-OTHER",
        options: {
            $0.overrideValues[.sync] = words([3, 0])
            $0.sync = .v1(SyncV1(contentID: [], durationToExpiry: 0))
        }, apple: .noError),
    .init(id: "REQ-TAGS transaction ID", options: { $0.transactionID = nil }, apple: .missingRequiredTag),
    .init(id: "REQ-TAGS protocol version used", options: { $0.protocolVersionUsed = nil }, apple: .missingRequiredTag),
    .init(id: "REQ-TAGS versions supported", options: { $0.protocolVersionsSupported = nil }, apple: .missingRequiredTag),
    .init(id: "REQ-TAGS return request", options: { $0.omit = [.returnRequest] }, apple: .missingRequiredTag),
    .init(
        id: "REQ-TWO-FAULTS",
        options: {
            $0.omit = [.r2]
            $0.overrideValues[.capabilities] = [1]
        }, apple: .parameterError),
    .init(id: "RET-MISSING", options: { $0.returnRequest = [.streamingIndicator] }, apple: .missingRequiredTag),
    .init(id: "RET-DUP", options: { $0.returnRequest = [.transactionID, .transactionID] }, apple: .noError),
    .init(
        id: "TLLV-VERSION-NEGOTIATION",
        options: {
            $0.protocolVersionsSupported = [1, 2]
            $0.protocolVersionUsed = 1
        }, apple: .noError),
    .init(id: "SPC-TRAILING-BYTES whole block", spc: { $0 + [UInt8](repeating: 9, count: 16) }, apple: .noError),
    .init(id: "SPC-TRAILING-BYTES partial block", spc: { $0 + [9] }, apple: .parameterError),
    .init(
        id: "SPC-PAYLOAD-LEN-OVER",
        spc: {
            var s = $0
            // The big-endian payload length at 300..<304, 16 more than the bytes that follow (no wrap of its low byte).
            let length = s[300..<304].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } + 16
            s.replaceSubrange(300..<304, with: withUnsafeBytes(of: length.bigEndian, Array.init))
            return s
        }, apple: .parameterError),
    .init(id: "SPC-V12-HEADER-SHORT", spc: { Array($0.prefix(200)) }, apple: .parameterError),
    .init(
        id: "SPC-CONTAINER-VERSION",
        spc: {
            var s = $0
            s[3] = 9
            return s
        }, apple: .spcVersionError),
    .init(
        id: "STATUS-RSA-FAIL",
        spc: {
            var s = $0
            s[40] ^= 0xFF
            return s
        }, apple: .invalidCertificate),
    .init(id: "RULE-KDL", options: { $0.kextDenyListVersion = 30 }, apple: .clientSecurityLevel),
    .init(
        id: "RULE-KDL audio-free sd", content: .sd, options: { $0.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 12) },
        apple: .clientSecurityLevel, worker: false),
    .init(
        id: "RULE-UHD-LEVEL unreported", content: .uhd,
        options: {
            $0.capabilities = Capabilities(low: Capabilities.hdcpEnforcementBit)
            $0.deviceInfo = DeviceInfo(deviceType: DeviceInfo.appleTV, osVersion: 0x000f_0000)
        }, apple: .noError),
    .init(
        id: "RULE-UHD-LEVEL baseline bits", content: .uhd,
        options: { $0.capabilities = Capabilities(low: Capabilities.hdcpEnforcementBit | Capabilities.securityLevelBaselineBit) }, apple: .clientSecurityLevel),
    .init(
        id: "RULE-UHD-LEVEL baseline report", content: .uhd,
        options: {
            $0.securityLevelReport = SecurityLevelReport(level: .baseline, kdlVersion: 0)
            $0.capabilities = Capabilities(low: 0x3f)
        }, apple: .clientSecurityLevel),
    .init(
        id: "RULE-UHD-LEVEL main report", content: .uhd,
        options: {
            $0.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 0)
            $0.capabilities = Capabilities(low: 0x3f)
        }, apple: .noError),
    .init(
        id: "RULE-HDCP1-CAPS", content: .uhd, options: { $0.capabilities = Capabilities(low: Capabilities.securityLevelMainBit) }, apple: .clientSecurityLevel),
    .init(
        id: "RULE-HD-LEVEL audio report", content: .hd, options: { $0.securityLevelReport = SecurityLevelReport(level: .audio, kdlVersion: 0) },
        apple: .clientSecurityLevel),
    .init(id: "CKC-KEY-DURATION-GATE lease without playback state", content: .lease, apple: .noError),
    .init(
        id: "TLLV-PLAYBACK-VALUES session stopped", content: .lease,
        options: { $0.playback = MediaPlaybackInfo(creationDate: 1_700_000_000, state: .sessionStopped, sessionID: 4) }, apple: .noError),
    .init(
        id: "TLLV-PLAYBACK-VALUES unnamed state", content: .lease,
        options: { $0.playback = MediaPlaybackInfo(creationDate: 1_700_000_000, state: PlaybackState(rawValue: 0x0bad_cafe), sessionID: 4) }, apple: .noError),
    .init(
        id: "RULE-CHECKIN-NO-SYNC sync v1", checkIn: true,
        options: { $0.sync = .v1(SyncV1(contentID: [UInt8](repeating: 1, count: 16), durationToExpiry: 60)) }, apple: .parameterError),
    .init(id: "RULE-CHECKIN-NO-SYNC no sync", checkIn: true, apple: .parameterError),
    .init(
        id: "RULE-CHECKIN sync v2", checkIn: true,
        options: {
            $0.sync = .v2(
                SyncV2(serverChallenge: 1, flags: [.report], titleID: [UInt8](repeating: 2, count: 16), durationToExpiry: 60, invalidatedStreamIDs: []))
        }, apple: .noError),
]

extension LicenseProcessorTests {
    func fidelitySPC(_ c: FidelityCase) throws -> (spc: [UInt8], session: DeviceSession) {
        var o = World.options(c.content == .uhd ? World.uhdAsset : c.content == .lease ? World.liveAsset : World.hdAsset)
        c.options(&o)
        let (spc, session) = try world.deviceA.makeSPC(o)
        return (c.spc(spc), session)
    }

    @Test("SDK 26's answer through ksm process's processor, rule by rule (docs/apple-fidelity.md)", arguments: fidelityCases)
    func appleJSONAnswersAsSDK26(_ c: FidelityCase) throws {
        let (spc, session) = try fidelitySPC(c)
        var info: [String: Any] = ["content-key": "00112233445566778899aabbccddeeff", "content-iv": "ffeeddccbbaa99887766554433221100"]
        switch c.content {
        case .sd: info["content-type"] = "sd"
        case .hd: info["content-type"] = "hd"
        case .uhd:
            info["content-type"] = "uhd"
            info["hdcp-type"] = 1
        case .lease:
            info["content-type"] = "hd"
            info["lease-duration"] = 120
        }
        let op: [String: Any] = ["id": 7, "spc": Data(spc).base64EncodedString(), "check-in": c.checkIn, "asset-info": [info]]
        let request = try JSONSerialization.data(withJSONObject: ["fairplay-streaming-request": ["create-ckc": [op]]])
        let processor = AppleJSONProcessor(server: try world.keyServer())
        let response = try JSONSerialization.jsonObject(with: Data(processor.processToJSON(Array(request)))) as? [String: Any]
        let results = try #require((response?["fairplay-streaming-response"] as? [String: Any])?["create-ckc"] as? [[String: Any]])
        let result = try #require(results.first)
        #expect(result["status"] as? Int32 == c.apple.rawValue || result["status"] as? Int == Int(c.apple.rawValue), "\(result)")
        guard c.apple == .noError else { return }
        // A check-in is answered without its CKC (SDK 26 serialize.rs); every other success opens on the device.
        if c.checkIn {
            #expect(result["ckc"] == nil)
            return
        }
        let ckc = try #require(Data(base64Encoded: result["ckc"] as? String ?? ""))
        let opened = try CKCOpener.open(Array(ckc), session: session)
        #expect(opened.contentKey.hexString == "00112233445566778899aabbccddeeff")
        // Always sent by SDK 26: HDCP, required security level, session-key version used.
        #expect(opened.hdcp != nil && opened.requiredSecurityLevel != nil && opened.sessionKeyKind == SessionKeyKind.generic.rawValue)
        if c.content == .lease {
            let hasPlayback = (try world.keyServer().open(spc)).payload.playback != nil
            #expect((opened.keyDuration != nil) == hasPlayback)
        }
        if c.id == "RET-DUP" {
            #expect(opened.tags.filter { $0 == TLLVTag.transactionID }.count == 1)
        }
    }

    @Test("The worker's default policy answers as SDK 26 where the request is the same (docs/apple-fidelity.md)", arguments: fidelityCases.filter { $0.worker })
    func workerAnswersAsSDK26(_ c: FidelityCase) async throws {
        let store = try await memoryStore()
        let processor = try world.processor(store: store, pool: sharedPool)
        let (spc, session) = try fidelitySPC(c)
        let job = LicenseJob(id: id("fidelity"), tenant: id("acme"), account: id("alice"), spc: spc, checkIn: c.checkIn)
        let reply = try #require(await processor.process([job], now: t0).first)
        #expect(reply.status.rawValue == c.apple.rawValue, "\(reply.status) \(reply.rule) \(reply.reason)")
        guard c.apple == .noError, !c.checkIn else { return }
        let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
        #expect(opened.hdcp != nil && opened.requiredSecurityLevel != nil)
    }
}
