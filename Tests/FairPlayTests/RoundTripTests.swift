import FairPlay
import FairPlayDevice
import Testing

/// SPCs from the simulated device through the server and back, for v1 and v2 and every optional TLLV.
@Suite struct RoundTripTests {
    static let key = [UInt8](repeating: 0x3b, count: 16)
    static let iv = Array("TheQuickBrownFox".utf8)

    static func everything(version: UInt32) -> SPCOptions {
        var o = SPCOptions()
        o.spcVersion = version
        o.assetID = Array("skd://live/event-42/period-7".utf8)
        o.streamingIndicator = .airPlay
        o.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 0xabcdef)
        o.capabilities = Capabilities(high: 0, low: 0x3f)
        o.deviceInfo = DeviceInfo(deviceType: DeviceInfo.mac, osVersion: 0x000e_0300)
        o.sync = .v2(
            SyncV2(
                serverChallenge: 0x1122_3344_5566_7788, flags: [.report, .secureInvalidation], titleID: [UInt8](repeating: 7, count: 16),
                durationToExpiry: 86_000, invalidatedStreamIDs: [[UInt8](repeating: 1, count: 16), [UInt8](repeating: 2, count: 16)]))
        o.kextDenyListVersion = 31
        o.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 30)
        o.vmDeviceInfo = VMDeviceInfo(
            hostDeviceClass: 3, hostOSVersion: 0x000f_0000, hostVirtualizationProtocol: 1, guestDeviceClass: 3, guestOSVersion: 0x000e_0000,
            guestVirtualizationProtocol: 1)
        o.supportedKeyFormats = [TLLVTag.encryptedContentKey.rawValue]
        o.returnRequest = [.transactionID, .streamingIndicator, .capabilities, .mediaPlaybackState]
        o.reservedTLLVCount = 6
        return o
    }

    @Test("Every optional TLLV survives the trip into typed values", arguments: [UInt32(1), 2])
    func everyTLLVParsed(version: UInt32) throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        let options = Self.everything(version: version)
        let (spc, session) = try device.makeSPC(options)
        let request = try Fixtures.testServer().open(spc)
        let p = request.payload
        #expect(request.spcVersion == version)
        #expect(request.hu == device.hu)
        #expect(request.secrets.r1 == session.r1)
        #expect(request.secrets.sessionKey == session.sessionKey)
        #expect(Array(p.assetID) == options.assetID)
        #expect(p.transactionID == options.transactionID)
        #expect(p.protocolVersionsSupported == [1, 2])
        #expect(p.protocolVersionUsed == 1)
        #expect(p.streamingIndicator == .airPlay)
        #expect(p.playback == options.playback)
        #expect(p.capabilities == options.capabilities)
        #expect(p.deviceIdentity == options.deviceIdentity)
        #expect(p.deviceInfo == options.deviceInfo)
        #expect(p.sync == options.sync)
        #expect(p.kextDenyListVersion == 31)
        #expect(p.effectiveKDLVersion == 31)
        #expect(p.securityLevelReport == options.securityLevelReport)
        #expect(p.vmDeviceInfo == options.vmDeviceInfo)
        #expect(p.vmDeviceInfo?.isVirtualMachine == true)
        #expect(p.supportedKeyFormats == [TLLVTag.encryptedContentKey.rawValue])
        #expect(p.returnRequest == options.returnRequest)
    }

    @Test("A CKC with every grant opens on the device with the same key, IV and terms", arguments: [UInt32(1), 2])
    func ckcWithEverything(version: UInt32) throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        let (spc, session) = try device.makeSPC(Self.everything(version: version))
        let server = try Fixtures.testServer()
        let request = try server.open(spc)
        let content = CKCContent(
            contentKey: Self.key, contentIV: Self.iv, keyDuration: .leaseAndRental(lease: 600, rental: 172_800), hdcp: .type1, requiredSecurityLevel: .main)
        let opened = try CKCOpener.open(try server.makeCKC(for: request, content), session: session)
        #expect(opened.contentKey == Self.key)
        #expect(opened.contentIV == Self.iv)
        #expect(opened.keyDuration == .leaseAndRental(lease: 600, rental: 172_800))
        #expect(opened.hdcp == .type1)
        #expect(opened.requiredSecurityLevel == .main)
        #expect(opened.sessionKeyKind == SessionKeyKind.generic.rawValue)
        // Returned blocks come last, in the order requested; the opener checked them byte for byte.
        #expect(Array(opened.tags.suffix(4)) == [.transactionID, .streamingIndicator, .capabilities, .mediaPlaybackState])
    }

    static let durations: [ContentKeyDuration] = [
        .lease(120), .rental(3600), .leaseAndRental(lease: 60, rental: 7200), .persistableUnlimited, .persistable(limitedTo: 86_400),
    ]

    @Test("Each content key duration type reaches the device", arguments: durations)
    func durationTypes(duration: ContentKeyDuration) throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        var o = SPCOptions()
        o.playback = MediaPlaybackInfo(creationDate: 1, state: .readyToPlay, sessionID: 9)
        let (spc, session) = try device.makeSPC(o)
        let server = try Fixtures.testServer()
        let ckc = try server.makeCKC(for: try server.open(spc), CKCContent(contentKey: Self.key, contentIV: Self.iv, keyDuration: duration))
        #expect(try CKCOpener.open(ckc, session: session).keyDuration == duration)
    }

    @Test(
        "The offline key TLLV goes to clients with capability bit 3; bit 1 alone, or neither bit, gets a persistable content key duration (SDK 26 checkSupportedFeatures, populateTagsCustom)",
        arguments: [Capabilities.offlineKeyBit, Capabilities.offlineKeyV2Bit, Capabilities.offlineKeyBit | Capabilities.offlineKeyV2Bit, 0])
    func offlineKeyVersions(bits: UInt64) throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        var o = SPCOptions()
        o.playback = MediaPlaybackInfo(creationDate: 1_790_000_000, state: .readyToPlay, sessionID: 3)
        o.capabilities = Capabilities(low: bits)
        let (spc, session) = try device.makeSPC(o)
        let server = try Fixtures.testServer()
        let request = try server.open(spc)
        let offline = OfflineKey(
            version: 2, contentID: [UInt8](repeating: 5, count: 16), storageDuration: 2_592_000, playbackDuration: 86_400,
            titleID: [UInt8](repeating: 6, count: 16))
        let opened = try CKCOpener.open(
            try server.makeCKC(for: request, CKCContent(contentKey: Self.key, contentIV: Self.iv, offlineKey: offline)), session: session)
        if bits & Capabilities.offlineKeyV2Bit != 0 {
            #expect(opened.offlineKey == offline)
            #expect(opened.keyDuration == nil)
        } else {
            #expect(opened.offlineKey == nil)
            #expect(opened.keyDuration == ContentKeyDuration(leaseSeconds: 0, rentalSeconds: 2_592_000, keyType: .persistableLimited))
        }
    }

    @Test("Without a media playback state the CKC carries neither a content key duration nor an offline key (SDK 26 populateTagsCustom)")
    func noTermsWithoutPlaybackState() throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        let (spc, session) = try device.makeSPC(SPCOptions())
        let server = try Fixtures.testServer()
        let request = try server.open(spc)
        let lease = try CKCOpener.open(
            try server.makeCKC(for: request, CKCContent(contentKey: Self.key, contentIV: Self.iv, keyDuration: .lease(120))), session: session)
        #expect(lease.contentKey == Self.key)
        #expect(lease.keyDuration == nil)
        let offline = OfflineKey(
            version: 2, contentID: [UInt8](repeating: 5, count: 16), storageDuration: 9, playbackDuration: 9, titleID: [UInt8](repeating: 6, count: 16))
        let download = try CKCOpener.open(
            try server.makeCKC(for: request, CKCContent(contentKey: Self.key, contentIV: Self.iv, offlineKey: offline)), session: session)
        #expect(download.offlineKey == nil)
        #expect(download.keyDuration == nil)
    }

    @Test("Playback states 1-3 parse; state 2 gets a CKC without a valid key", arguments: [PlaybackState.readyToPlay, .playingOrPaused, .leaseRenewal])
    func playbackStates(state: PlaybackState) throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        var o = SPCOptions()
        o.playback = MediaPlaybackInfo(creationDate: 100, state: state, sessionID: 77)
        let (spc, session) = try device.makeSPC(o)
        let server = try Fixtures.testServer()
        let request = try server.open(spc)
        #expect(request.payload.playback?.state == state)
        let key: [UInt8]? = state == .playingOrPaused ? nil : Self.key
        let opened = try CKCOpener.open(
            try server.makeCKC(for: request, CKCContent(contentKey: key, contentIV: Self.iv, keyDuration: .lease(300))), session: session)
        #expect(opened.keyDuration == .lease(300))
        if key != nil { #expect(opened.contentKey == Self.key) }
    }

    @Test("Streaming indicators: AirPlay, AV adapter, the device itself", arguments: [StreamingIndicator.airPlay, .avAdapter, .device(0x1234)])
    func streamingIndicators(indicator: StreamingIndicator) throws {
        var o = SPCOptions()
        o.streamingIndicator = indicator
        let (spc, _) = try SimulatedDevice(trust: try Fixtures.testTrust()).makeSPC(o)
        #expect(try Fixtures.testServer().open(spc).payload.streamingIndicator == indicator)
    }

    @Test("Sync v1 and a sync TLLV of an unknown version (not a sync SPC)")
    func syncVersions() throws {
        let device = SimulatedDevice(trust: try Fixtures.testTrust())
        var o = SPCOptions()
        o.sync = .v1(SyncV1(contentID: [UInt8](repeating: 3, count: 16), durationToExpiry: .max))
        #expect(try Fixtures.testServer().open(try device.makeSPC(o).spc).payload.sync == o.sync)
        o.sync = nil
        var bogus: [UInt8] = []
        bogus.appendBigEndian(UInt32(9))
        bogus += [UInt8](repeating: 0, count: 40)
        o.extraTLLVs = [(.sync, bogus)]
        #expect(try Fixtures.testServer().open(try device.makeSPC(o).spc).payload.sync == nil)
    }

    @Test("Several credentials at once: the certificate hash picks the key")
    func severalCredentials() throws {
        let server = KeyServerModule(credentials: try CredentialStore([try Fixtures.testCredential(), try Fixtures.appleCredential()]))
        let (spc, session) = try SimulatedDevice(trust: try Fixtures.testTrust()).makeSPC()
        let request = try server.open(spc)
        #expect(request.credential.name == "test")
        #expect(
            try CKCOpener.open(try server.makeCKC(for: request, CKCContent(contentKey: Self.key, contentIV: Self.iv)), session: session).contentKey == Self.key)
        #expect(try server.open(try Fixtures.apple("FPS/spc1.bin")).credential.name == "apple-dev")
    }

    @Test("A device that lists versions it does not use is never refused (SDK 26 checks no version)")
    func versionsAreNotNegotiated() throws {
        // Every real device lists [1, 2] and uses 1; the guide's "newest common version" would refuse it.
        let rows: [(server: [UInt32], used: UInt32, supported: [UInt32])] = [
            ([], 1, [1, 2]), ([1, 2], 1, [1, 2]), ([1], 1, [1, 2]), ([], 7, []), ([1, 2], 2, [1]),
        ]
        for row in rows {
            #expect(throws: Never.self) { try ProtocolVersionPolicy(accepted: row.server).check(used: row.used, deviceSupported: row.supported) }
        }
        #expect(throws: FairPlayError.self) { try ProtocolVersionPolicy(accepted: [2]).check(used: 1, deviceSupported: [1, 2]) }
    }
}
