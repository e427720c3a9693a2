import FairPlay
import FairPlayDevice
import Foundation
import Testing
import Wire

/// `ksm process` and `ksm inspect` as a user runs them: the real binary, files in, JSON out.
@Suite(.serialized) struct ProcessCommandTests {
    // Private (0600) copies: `ksm` refuses secret files readable by group or others.
    static var appleCredentials: String { get throws { try KSMBinary.privateCredentials("Fixtures/apple-sdk-2.0.3/certificates.json") } }
    static var testCredentials: String { get throws { try KSMBinary.privateCredentials("Fixtures/test-credentials/certificates.json") } }

    static func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: KSMBinary.packageRoot.appendingPathComponent(path)))
    }

    static func results(_ r: KSMBinary.Result, _ kind: String = "create-ckc") -> [[String: Any]] {
        ((r.json as? [String: Any])?["fairplay-streaming-response"] as? [String: Any])?[kind] as? [[String: Any]] ?? []
    }

    static func testTrust() throws -> DeviceTrust {
        let ask = [UInt8](
            hexString: String(decoding: try bytes("Fixtures/test-credentials/test_ask.hex"), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))!
        return try DeviceTrust(
            certificateDER: try bytes("Fixtures/test-credentials/test_certificate.der"),
            publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: try bytes("Fixtures/test-credentials/test_public_key_2048.pem")), ask: ask)
    }

    static func request(_ ops: [[String: Any]], kind: String = "create-ckc") throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: ["fairplay-streaming-request": [kind: ops]]))
    }

    @Test("The bundled example: Apple's own SPCs answered with CKCs that open to the expected keys")
    func bundledExample() async throws {
        let r = try await KSMBinary.run(["process", "--credentials", try Self.appleCredentials, "Examples/create-ckc.json"])
        #expect(r.status == 0, "\(String(decoding: r.stderr, as: UTF8.self))")
        let results = Self.results(r)
        #expect(results.count == 2)
        // Open each CKC as the device would, with the session values the SPC carries.
        let apple = KeyServerModule(
            credentials: try CredentialStore([
                try ApplicationCredential(
                    name: "apple", certificateDER: try Self.bytes("Fixtures/apple-sdk-2.0.3/dev_certificate.der"),
                    privateKey1024: try RSAPrivateKey(pemOrDER: try Self.bytes("Fixtures/apple-sdk-2.0.3/dev_private_key.pem")), privateKey2048: nil,
                    sessionKeySource: .fixedDerivedKey([UInt8](hexString: "d87ce7a26081de2e8eb8acef3a6dc179")!))
            ]))
        let spcs = ["FPS/spc2.bin", "FPS-Lease/spc1.bin"]
        for (result, spcPath) in zip(results, spcs) {
            #expect(result["status"] as? Int == 0)
            let spc = Array(try Data(contentsOf: KSMBinary.shared.appendingPathComponent("vectors/apple-sdk-2.0.3/\(spcPath)")))
            let opened = try apple.open(spc)
            let session = DeviceSession(
                sessionKey: opened.secrets.sessionKey!, hu: opened.hu, r1: opened.secrets.r1, antiReplaySeed: Array(opened.payload.antiReplaySeed),
                assetID: Array(opened.assetID),
                requestedBlocks: Dictionary(uniqueKeysWithValues: opened.payload.returnRequest.map { ($0, Array(opened.payload.tllvs[$0]!.raw)) }),
                capabilities: opened.payload.capabilities)
            let ckc = Array(Data(base64Encoded: result["ckc"] as? String ?? "") ?? Data())
            let ck = try CKCOpener.open(ckc, session: session)
            #expect(ck.contentKey.hexString == "31313131313131313131313131313131")
            #expect(ck.contentIV.hexString == "546865517569636b42726f776e466f78")
            #expect(result["hu"] as? String == opened.hu.hexString.uppercased())
        }
        #expect(
            try CKCOpener.open(
                Array(Data(base64Encoded: results[1]["ckc"] as! String)!),
                session: {
                    let o = try apple.open(Array(try Data(contentsOf: KSMBinary.shared.appendingPathComponent("vectors/apple-sdk-2.0.3/FPS-Lease/spc1.bin"))))
                    return DeviceSession(
                        sessionKey: o.secrets.sessionKey!, hu: o.hu, r1: o.secrets.r1, antiReplaySeed: Array(o.payload.antiReplaySeed), assetID: [],
                        requestedBlocks: [:], capabilities: nil)
                }()
            ).keyDuration?.leaseSeconds == 120)
    }

    @Test(
        "Apple's business rules: uhd with HDCP type 1 to a Main client, refused for a Baseline one and a KDL below 31; offline keys by capability; uhd without type 1 and a missing content type are paramErr"
    )
    func businessRules() async throws {
        let device = SimulatedDevice(trust: try Self.testTrust())
        var main = SPCOptions()
        main.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 0)
        main.capabilities = Capabilities(low: 0x3f)
        main.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 5)
        let (mainSPC, mainSession) = try device.makeSPC(main)
        var baseline = SPCOptions()
        baseline.securityLevelReport = SecurityLevelReport(level: .baseline, kdlVersion: 0)
        let (baselineSPC, _) = try device.makeSPC(baseline)
        var oldMac = main
        oldMac.kextDenyListVersion = 30
        let (oldMacSPC, _) = try device.makeSPC(oldMac)
        let key = "0123456789abcdef0123456789abcdef"
        let iv = "00112233445566778899aabbccddeeff"
        let uhd: [[String: Any]] = [["content-key": key, "content-iv": iv, "content-type": "uhd", "hdcp-type": 1]]
        let offline: [[String: Any]] = [
            [
                "content-key": key, "content-iv": iv, "content-type": "hd",
                "offline-hls": [
                    "stream-id": "00112233445566778899aabbccddeeff", "title-id": "0102030405060708090a0b0c0d0e0f10", "rental-duration": 2_592_000,
                    "playback-duration": 86_400,
                ],
            ]
        ]
        let uhdType0: [[String: Any]] = [["content-key": key, "content-iv": iv, "content-type": "uhd"]]
        let noType: [[String: Any]] = [["content-key": key, "content-iv": iv]]
        let ops: [[String: Any]] = [
            ["id": 1, "spc": Data(mainSPC).base64EncodedString(), "asset-info": uhd],
            ["id": 2, "spc": Data(baselineSPC).base64EncodedString(), "asset-info": uhd],
            ["id": 3, "spc": Data(oldMacSPC).base64EncodedString(), "asset-info": uhd],
            ["id": 4, "spc": Data(mainSPC).base64EncodedString(), "asset-info": offline],
            ["id": 5, "spc": "not base64!", "asset-info": uhd],
            ["id": 6, "spc": Data(mainSPC).base64EncodedString(), "asset-info": uhdType0],
            ["id": 7, "spc": Data(mainSPC).base64EncodedString(), "asset-info": noType],
        ]
        let r = try await KSMBinary.run(["process", "--credentials", try Self.testCredentials, "-"], input: try Self.request(ops))
        let results = Self.results(r)
        #expect(results.map { $0["status"] as? Int } == [0, -42604, -42604, 0, -42581, -42585, -42585])
        let ck = try CKCOpener.open(Array(Data(base64Encoded: results[0]["ckc"] as! String)!), session: mainSession)
        #expect(ck.contentKey.hexString == key)
        #expect(ck.requiredSecurityLevel == .main)
        #expect(ck.hdcp == .type1)
        let off = try CKCOpener.open(Array(Data(base64Encoded: results[3]["ckc"] as! String)!), session: mainSession)
        #expect(off.offlineKey?.version == 2)
        #expect(off.offlineKey?.storageDuration == 2_592_000)
        #expect(off.keyDuration == nil)
        #expect((results[2]["reason"] as? String)?.contains("Kext Deny List") == true)
    }

    @Test("A request that is not JSON, or has no operations, answers paramErr instead of failing")
    func badRequests() async throws {
        for input in ["{nope", "{\"fairplay-streaming-request\": {}}", "[]"] {
            let r = try await KSMBinary.run(["process", "--credentials", try Self.testCredentials, "-"], input: Array(input.utf8))
            #expect(r.status == 0)
            #expect(Self.results(r).first?["status"] as? Int == -42585)
        }
        let r = try await KSMBinary.run(["process", "--credentials", "Fixtures/no-such-file.json", "-"], input: [])
        #expect(r.status != 0)
        #expect(String(decoding: r.stderr, as: UTF8.self).contains("no-such-file.json"))
    }

    @Test("get-client-info reports the device's identity, sync and VM fields")
    func clientInfo() async throws {
        var o = SPCOptions()
        o.vmDeviceInfo = VMDeviceInfo(
            hostDeviceClass: 3, hostOSVersion: 0x000f_0100, hostVirtualizationProtocol: 1, guestDeviceClass: 3, guestOSVersion: 0x000e_0000,
            guestVirtualizationProtocol: 1)
        o.sync = .v2(
            SyncV2(
                serverChallenge: 42, flags: [.report], titleID: [UInt8](repeating: 0xAB, count: 16), durationToExpiry: 3600,
                invalidatedStreamIDs: [[UInt8](repeating: 1, count: 16)]))
        let device = SimulatedDevice(trust: try Self.testTrust())
        let (spc, _) = try device.makeSPC(o)
        let r = try await KSMBinary.run(
            ["process", "--credentials", try Self.testCredentials, "-"],
            input: try Self.request([["id": "9", "spc": Data(spc).base64EncodedString()]], kind: "get-client-info"))
        let info = try #require(Self.results(r, "get-client-info").first)
        #expect(info["status"] as? Int == 0)
        #expect(info["hu"] as? String == device.hu.hexString.uppercased())
        #expect(info["asset-id"] as? String == "skd://asset-1")
        #expect((info["vm-device-info"] as? [String: Any])?["host-os-version"] as? String == "000F0100")
        let sync = try #require(info["offline-sync"] as? [String: Any])
        #expect(sync["records-invalidated"] as? Int == 1)
        #expect(sync["server-challenge"] as? Int == 42)
        #expect((info["device-identity"] as? [String: Any])?["device-class"] as? Int == 2)
    }

    @Test("ksm inspect lists every TLLV tag of Apple's SPC, reserved ones included")
    func inspect() async throws {
        let path = KSMBinary.shared.appendingPathComponent("vectors/apple-sdk-2.0.3/FPS/spc1.bin").path
        let r = try await KSMBinary.run(["inspect", "--credentials", try Self.appleCredentials, path])
        #expect(r.status == 0)
        let out = try #require(r.json as? [String: Any])
        #expect(out["asset-id-hex"] as? String == "aabbccddeeffaabbccddeeffaabbccddeeff")
        #expect(out["certificate-hash"] as? String == "5561980aa51f03aa04bca24556c841a71736c771")
        let tllvs = try #require(out["tllvs"] as? [[String: Any]])
        #expect(tllvs.contains { $0["name"] as? String == "sk-r1" })
        #expect(tllvs.contains { $0["name"] == nil })
        let bad = try await KSMBinary.run(["inspect", "--credentials", try Self.testCredentials, path])
        #expect(bad.status == 2)
        #expect((bad.json as? [String: Any])?["status"] as? Int == -42605)
    }
}
