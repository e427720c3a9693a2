import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing
import Wire

/// Apple's own device SPCs (../shared/vectors/apple-sdk-2.0.3, FPS/ and FPS-Lease/) asked for under a
/// lease: SDK 26 issues each a CKC, with a content key duration only when the
/// SPC carries a media playback state (FPS-Lease/), and so must `ksm process` and the worker.
@Suite(.timeLimit(.minutes(1)))
struct AppleVectorLeaseTests {
    static let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/vectors/apple-sdk-2.0.3")
    static let spcs = ["FPS/spc1.bin", "FPS/spc2.bin", "FPS/spc3.bin", "FPS-Lease/spc1.bin", "FPS-Lease/spc2.bin", "FPS-Lease/spc3.bin"]

    let credential: ApplicationCredential
    let server: KeyServerModule

    init() throws {
        credential = try ApplicationCredential(
            name: "apple-dev",
            certificateDER: Array(try Data(contentsOf: Self.vectors.appendingPathComponent("credentials/dev_certificate.der"))),
            privateKey1024: try RSAPrivateKey(pemOrDER: Array(try Data(contentsOf: Self.vectors.appendingPathComponent("credentials/dev_private_key.pem")))),
            privateKey2048: nil,
            sessionKeySource: .fixedDerivedKey([UInt8](hexString: "d87ce7a26081de2e8eb8acef3a6dc179") ?? []))
        server = KeyServerModule(credentials: try CredentialStore([credential]))
    }

    /// The SPC, the session a device holds for it, and the key EXPECTED.md says its CKC carries.
    func vector(_ path: String) throws -> (spc: [UInt8], session: DeviceSession, hasPlayback: Bool, key: String, iv: String) {
        let spc = Array(try Data(contentsOf: Self.vectors.appendingPathComponent(path)))
        let opened = try server.open(spc)
        let sessionKey = try #require(opened.secrets.sessionKey)
        let blocks = Dictionary(uniqueKeysWithValues: try opened.payload.returnRequest.map { ($0, Array(try #require(opened.payload.tllvs[$0]).raw)) })
        let session = DeviceSession(
            sessionKey: sessionKey, hu: opened.hu, r1: opened.secrets.r1, antiReplaySeed: Array(opened.payload.antiReplaySeed),
            assetID: Array(opened.assetID), requestedBlocks: blocks, capabilities: opened.payload.capabilities)
        let one = Array(opened.assetID) == Array("one".utf8)
        return (
            spc, session, opened.payload.playback != nil,
            one ? "31313131313131313131313131313131" : "3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b3b",
            one ? "546865517569636b42726f776e466f78" : "d5fbd6b82ed93e4ef98ae40931ee33b7"
        )
    }

    @Test("ksm process answers each of Apple's six SPCs under a lease with a CKC; a duration only with a playback state", arguments: spcs)
    func processIssuesLeaseCKC(_ path: String) throws {
        let v = try vector(path)
        let op: [String: Any] = [
            "id": 1, "spc": Data(v.spc).base64EncodedString(),
            "asset-info": [["content-key": v.key, "content-iv": v.iv, "content-type": "hd", "lease-duration": 120]],
        ]
        let request = try JSONSerialization.data(withJSONObject: ["fairplay-streaming-request": ["create-ckc": [op]]])
        let response = try JSONSerialization.jsonObject(with: Data(AppleJSONProcessor(server: server).processToJSON(Array(request)))) as? [String: Any]
        let result = try #require(((response?["fairplay-streaming-response"] as? [String: Any])?["create-ckc"] as? [[String: Any]])?.first)
        #expect(result["status"] as? Int == 0, "\(result)")
        let ckc = try #require(Data(base64Encoded: result["ckc"] as? String ?? ""))
        let opened = try CKCOpener.open(Array(ckc), session: v.session)
        #expect(opened.contentKey.hexString == v.key)
        #expect((opened.keyDuration?.leaseSeconds == 120) == v.hasPlayback)
        #expect((opened.keyDuration != nil) == v.hasPlayback)
    }

    @Test("The worker answers each of Apple's six SPCs under a lease policy with a CKC that opens to the stored key", arguments: spcs)
    func workerIssuesLeaseCKC(_ path: String) async throws {
        let v = try vector(path)
        let keyring = try KeyEncryptionKeyring([id("kek-apple"): [UInt8](repeating: 0xAB, count: 16)])
        let store = InMemoryLicenseStore()
        try await store.putTenant(
            TenantRecord(
                id: id("apple"), certificateHashes: [credential.certificateHash], keyEncryptionKeyID: id("kek-apple"),
                maxConcurrentStreams: 2, leaseDurationSeconds: 120))
        let wrapped = try keyring.wrap(contentKey: try #require([UInt8](hexString: v.key)), iv: try #require([UInt8](hexString: v.iv)), with: id("kek-apple"))
        try await store.putContentKey(wrapped, tenant: id("apple"), assetID: v.session.assetID, keyPeriod: nil)
        try await store.putPolicy(Array(#"{"content-type": "hd", "lease": {"duration": 120}}"#.utf8), tenant: id("apple"), assetID: nil)
        let processor = LicenseProcessor(keyServer: server, store: store, keyring: keyring, pool: sharedPool, logger: quietLogger)
        let reply = try #require(await processor.process([LicenseJob(id: id("vector"), tenant: id("apple"), account: id("viewer"), spc: v.spc)], now: t0).first)
        #expect(reply.status == .ok, "\(reply.status) \(reply.rule) \(reply.reason)")
        let opened = try CKCOpener.open(try #require(reply.ckc), session: v.session)
        #expect(opened.contentKey.hexString == v.key)
        #expect(opened.contentIV.hexString == v.iv)
        #expect((opened.keyDuration?.leaseSeconds == 120) == v.hasPlayback)
    }
}
