import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Testing
import Wire

/// One client of SDK 26's offline table: its capability bits 1 and 3, and whether its SPC carries a
/// media playback state.
struct OfflineClient: Sendable, CustomTestStringConvertible {
    var name: String
    var bits: UInt64
    var playback: Bool

    var readsOfflineKey: Bool { bits & Capabilities.offlineKeyV2Bit != 0 }
    var testDescription: String { "\(name), \(playback ? "playback state" : "no playback state")" }

    static let all: [OfflineClient] = [
        ("bit 1 only", Capabilities.offlineKeyBit), ("bit 3 only", Capabilities.offlineKeyV2Bit),
        ("bits 1 and 3", Capabilities.offlineKeyBit | Capabilities.offlineKeyV2Bit), ("neither bit", 0),
    ].flatMap { name, bits in [true, false].map { OfflineClient(name: name, bits: bits, playback: $0) } }
}

/// Offline downloads through the worker (LicenseProcessor, in-memory store, an offline policy), with
/// real SPCs from the device simulator and every CKC opened as a device opens it, against what Apple's
/// SDK 26 sends (`checkSupportedFeatures`: only bit 3 lets a client read the offline key TLLV, bit 1
/// is dual expiry support and changes no TLLV; `populateTagsCustom`: terms only with a playback state,
/// the offline key to bit-3 clients, `{0, storage, persistence-and-duration}` to the others). The same
/// SPC through `ksm process` must carry the same terms: one rule for both paths.
@Suite(.timeLimit(.minutes(1)))
struct OfflineWorkerPathTests {
    let world: World
    static let asset = "skd://acme/offline-sdk26"
    static let storage: UInt32 = 2_592_000
    static let playbackSeconds: UInt32 = 86_400
    static let streamID = [UInt8](repeating: 0x5A, count: 16)
    static let titleID = [UInt8](repeating: 0x7B, count: 16)

    init() throws {
        world = try World()
    }

    /// The in-memory store with the world's tenants and an offline asset; returns the asset's key.
    func store() async throws -> (InMemoryLicenseStore, [UInt8]) {
        let store = InMemoryLicenseStore()
        try await world.seed(store)
        let key = FairPlayCrypto.randomBytes(16)
        let wrapped = try world.keyring.wrap(contentKey: key, iv: FairPlayCrypto.randomBytes(16), with: id("kek-a"))
        try await store.putContentKey(wrapped, tenant: id("acme"), assetID: Array(Self.asset.utf8), keyPeriod: nil)
        let policy =
            #"{"content-type": "hd", "offline": {"enabled": true, "storage-duration": \#(Self.storage), "playback-duration": \#(Self.playbackSeconds)}}"#
        try await store.putPolicy(Array(policy.utf8), tenant: id("acme"), assetID: Array(Self.asset.utf8))
        return (store, key)
    }

    func options(_ client: OfflineClient) -> SPCOptions {
        var o = World.options(
            Self.asset, playback: client.playback ? MediaPlaybackInfo(creationDate: UInt32(t0 / 1000), state: .readyToPlay, sessionID: 11) : nil)
        o.capabilities = Capabilities(low: client.bits | Capabilities.hdcpEnforcementBit | Capabilities.securityLevelBaselineBit)
        return o
    }

    @Test("the worker answers each combination of capability bits 1 and 3 as SDK 26 does: CKC, rule and offline record agree", arguments: OfflineClient.all)
    func workerAnswersAsSDK26(_ client: OfflineClient) async throws {
        let (store, key) = try await store()
        let processor = try world.processor(store: store, pool: sharedPool)
        let (spc, session) = try world.deviceA.makeSPC(options(client))
        let job = LicenseJob(id: id("dl"), tenant: id("acme"), account: id("alice"), spc: spc, persistent: true, streamID: Self.streamID, titleID: Self.titleID)
        let reply = try #require(await processor.process([job], now: t0).first)
        // SDK 26 refuses no client for its offline bits.
        #expect(reply.status == .ok, "\(reply.status) \(reply.rule) \(reply.reason)")
        let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
        #expect(opened.contentKey == key)
        #expect(opened.hdcp != nil && opened.requiredSecurityLevel != nil)

        switch (client.playback, client.readsOfflineKey) {
        case (false, _):
            #expect(opened.offlineKey == nil && opened.keyDuration == nil)
            #expect(reply.rule == "offline:no-playback-state", "\(reply.reason)")
        case (true, true):
            #expect(
                opened.offlineKey
                    == OfflineKey(
                        version: 2, contentID: Self.streamID, storageDuration: Self.storage, playbackDuration: Self.playbackSeconds, titleID: Self.titleID))
            #expect(opened.keyDuration == nil)
            #expect(reply.rule == "offline:dual-expiry" && reply.reason.contains("offline key v2"), "\(reply.reason)")
        case (true, false):
            #expect(opened.offlineKey == nil)
            #expect(opened.keyDuration == ContentKeyDuration(leaseSeconds: 0, rentalSeconds: Self.storage, keyType: .persistableLimited, reserved: 0x86d3_4a3a))
            #expect(reply.rule == "offline:persistable" && !reply.reason.contains("offline key v2:"), "\(reply.reason)")
        }

        // An offline record (for later sync SPCs) exists exactly when the CKC carries the offline key.
        let read = StoreRequest(tenant: id("acme"), account: id("alice"), assetID: Array(Self.asset.utf8), accountReads: [.offlineRecords])
        let records = try #require(try await store.fetch([read]).first).offlineRecords
        if opened.offlineKey != nil {
            #expect(records.map(\.streamID) == [Self.streamID])
            #expect(records.first?.titleID == Self.titleID)
            #expect(records.first?.storageSeconds == Self.storage && records.first?.playbackSeconds == Self.playbackSeconds)
        } else {
            #expect(records.isEmpty)
        }

        // The same SPC through ksm process, asked for the same offline terms, carries the same TLLVs.
        let op: [String: Any] = [
            "id": 1, "spc": Data(spc).base64EncodedString(),
            "asset-info": [
                [
                    "content-key": "00112233445566778899aabbccddeeff", "content-iv": "ffeeddccbbaa99887766554433221100", "content-type": "hd",
                    "offline-hls": [
                        "stream-id": HexEncoding.encode(Self.streamID), "title-id": HexEncoding.encode(Self.titleID),
                        "rental-duration": Self.storage, "playback-duration": Self.playbackSeconds,
                    ],
                ]
            ],
        ]
        let request = try JSONSerialization.data(withJSONObject: ["fairplay-streaming-request": ["create-ckc": [op]]])
        let result = try #require(AppleJSONProcessor(server: try world.keyServer()).process(Array(request)).results.first)
        #expect(result.status == .noError, "\(result.reason ?? "")")
        let process = try CKCOpener.open(try #require(result.ckc), session: session)
        #expect(process.offlineKey == opened.offlineKey)
        #expect(process.keyDuration == opened.keyDuration)
    }
}
