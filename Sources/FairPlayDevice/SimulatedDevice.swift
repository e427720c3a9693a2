import FairPlay

/// An Apple device in software: builds SPCs exactly as the guide describes a device doing, with the real
/// legacy D function, and opens the CKCs that answer them (see `CKCOpener`).
public struct SimulatedDevice: Sendable {
    /// The server's certificate hashes, public keys and ASk this device builds SPCs for.
    public let trust: DeviceTrust
    /// The device's anonymized ID (20 bytes), stable across its requests.
    public let hu: [UInt8]

    /// Creates a device for one server.
    /// - Parameters:
    ///   - trust: What the device knows of the server.
    ///   - hu: The 20-byte anonymized device ID; nil picks a random one.
    public init(trust: DeviceTrust, hu: [UInt8]? = nil) {
        self.trust = trust
        self.hu = hu ?? FairPlayCrypto.randomBytes(20)
    }

    /// Builds one SPC: container version 1 or 2 (guide), or 3 (SDK 26, see `SimulatedDevice+V3`).
    /// - Throws: `parameterError` when the trust lacks the public key for `options.spcVersion`.
    public func makeSPC(_ options: SPCOptions = SPCOptions()) throws(FairPlayError) -> (spc: [UInt8], session: DeviceSession) {
        let sk = FairPlayCrypto.randomBytes(16)
        let r1 = FairPlayCrypto.randomBytes(44)
        let integrity = FairPlayCrypto.randomBytes(16)
        let r2 = FairPlayCrypto.randomBytes(21)
        let arSeed = FairPlayCrypto.randomBytes(16)

        // [SK..R1]: IV, then AES-CBC under DASk = D(R2, ASk) of SK | HU | R1 | integrity (table 2-7).
        let dask = try DFunction.derivedApplicationSecretKey(r2: r2, ask: trust.ask)
        let skR1IV = FairPlayCrypto.randomBytes(16)
        var skR1 = skR1IV
        skR1.append(contentsOf: try FairPlayCrypto.aes128CBCEncrypt(key: dask, iv: skR1IV, sk + hu + r1 + integrity))

        var blocks: [(TLLVTag, [UInt8])] = []
        func add(_ tag: TLLVTag, _ value: [UInt8]) { blocks.append((tag, options.overrideValues[tag] ?? value)) }
        add(.sessionKeyR1, skR1)
        add(.sessionKeyR1Integrity, options.corruptIntegrity ? integrity.map { $0 ^ 0x5A } : integrity)
        add(.antiReplaySeed, arSeed)
        add(.r2, r2)
        add(.assetID, options.assetID)
        if let id = options.transactionID { add(.transactionID, be(id)) }
        if let versions = options.protocolVersionsSupported { add(.protocolVersionsSupported, versions.flatMap { be($0) }) }
        if let used = options.protocolVersionUsed { add(.protocolVersionUsed, be(used)) }
        if let indicator = options.streamingIndicator { add(.streamingIndicator, be(indicator.rawValue)) }
        if let p = options.playback { add(.mediaPlaybackState, be(p.creationDate) + be(p.state.rawValue) + be(p.sessionID)) }
        if let c = options.capabilities { add(.capabilities, be(c.high) + be(c.low)) }
        if let d = options.deviceIdentity {
            add(
                .deviceIdentity,
                be(d.version) + be(d.deviceClass) + be(d.vendorHash) + be(d.productHash) + be(d.fairPlayVersionREE) + be(d.fairPlayVersionTEE) + be(d.osVersion)
            )
        }
        if let d = options.deviceInfo { add(.deviceInfo, be(d.deviceType) + be(d.osVersion) + be(d.version)) }
        if let s = options.sync { add(.sync, Self.encode(s)) }
        if let kdl = options.kextDenyListVersion { add(.kextDenyList, be(kdl)) }
        if let r = options.securityLevelReport {
            add(.securityLevelReport, be(r.version) + be(UInt32(0)) + be(r.level.rawValue) + be(r.kdlVersion))
        } else if options.encryptedSecurityLevelReport {
            add(.securityLevelReport, FairPlayCrypto.randomBytes(SecurityLevelReport.encryptedLength))
        }
        if let v = options.vmDeviceInfo {
            add(
                .vmDeviceInfo,
                be(v.version) + be(v.hostDeviceClass) + be(v.hostOSVersion) + be(v.hostVirtualizationProtocol) + be(v.guestDeviceClass) + be(v.guestOSVersion)
                    + be(v.guestVirtualizationProtocol))
        }
        if let formats = options.supportedKeyFormats {
            add(.supportedKeyFormats, be(options.supportedKeyFormatsVersion) + be(UInt32(0)) + be(UInt32(formats.count)) + formats.flatMap { be($0) })
        }
        if options.spcVersion == 3 {
            for (tag, value) in Self.videoSessionKeyTLLVs() { add(tag, value) }
        }
        add(.returnRequest, options.returnRequest.flatMap { be($0.rawValue) })
        for _ in 0..<options.reservedTLLVCount {
            let random = FairPlayCrypto.randomBytes(10)
            let tag = TLLVTag(random.prefix(8).reduce(0) { $0 << 8 | UInt64($1) })
            if tag.name == nil { blocks.append((tag, FairPlayCrypto.randomBytes(Int(random[8] % 48)))) }
        }
        blocks.removeAll { options.omit.contains($0.0) }
        if options.shuffle {
            let order = FairPlayCrypto.randomBytes(blocks.count)
            for i in stride(from: blocks.count - 1, to: 0, by: -1) { blocks.swapAt(i, Int(order[i]) % (i + 1)) }
        }
        blocks.append(contentsOf: options.extraTLLVs)

        var writer = TLLVWriter()
        var rawByTag: [TLLVTag: [UInt8]] = [:]
        let extra = FairPlayCrypto.randomBytes(blocks.count)
        for (i, (tag, value)) in blocks.enumerated() {
            let start = writer.bytes.count
            writer.append(tag, value, extraPaddingBlocks: options.maximumExtraPadding > 0 ? Int(extra[i]) % (options.maximumExtraPadding + 1) : 0)
            if rawByTag[tag] == nil { rawByTag[tag] = Array(writer.bytes[start...]) }
        }
        var payload = writer.bytes
        if let transform = options.payloadTransform {
            payload = transform(payload)
            if payload.count % 16 != 0 { payload.append(contentsOf: [UInt8](repeating: 0, count: 16 - payload.count % 16)) }
        }

        let spc = options.spcVersion == 3 ? try makeVersion3Container(payload) : try makeContainer(payload, version: options.spcVersion)

        var requested: [TLLVTag: [UInt8]] = [:]
        for tag in options.returnRequest { requested[tag] = rawByTag[tag] }
        let session = DeviceSession(
            sessionKey: sk, hu: hu, r1: r1, antiReplaySeed: arSeed, assetID: options.assetID, requestedBlocks: requested, capabilities: options.capabilities)
        return (spc, session)
    }

    /// Wraps a plaintext TLLV payload in an SPC version 1 or 2 container (guide table 2-3).
    private func makeContainer(_ payload: [UInt8], version: UInt32) throws(FairPlayError) -> [UInt8] {
        let spck = FairPlayCrypto.randomBytes(16)
        let iv = FairPlayCrypto.randomBytes(16)
        let encryptedPayload = try FairPlayCrypto.aes128CBCEncrypt(key: spck, iv: iv, payload)
        let wrapped: [UInt8]
        switch version {
        case 1:
            guard let key = trust.publicKey1024 else { throw FairPlayError(.parameterError, "device trust has no 1024-bit key for SPC v1") }
            wrapped = try key.encryptOAEP(spck, digest: .sha1)
        default:
            guard let key = trust.publicKey2048 else { throw FairPlayError(.parameterError, "device trust has no 2048-bit key for SPC v2") }
            wrapped = try key.encryptOAEP(spck, digest: .sha256)
        }
        var spc: [UInt8] = []
        spc.reserveCapacity(64 + wrapped.count + encryptedPayload.count)
        spc.appendBigEndian(version)
        spc.append(contentsOf: FairPlayCrypto.randomBytes(4))
        spc.append(contentsOf: iv)
        spc.append(contentsOf: wrapped)
        spc.append(contentsOf: trust.certificateHash)
        spc.appendBigEndian(UInt32(encryptedPayload.count))
        spc.append(contentsOf: encryptedPayload)
        return spc
    }

    static func encode(_ sync: SyncRequest) -> [UInt8] {
        switch sync {
        case .v1(let s):
            return be(UInt32(1)) + be(UInt32(0)) + s.contentID + be(s.durationToExpiry)
        case .v2(let s):
            return be(UInt32(2)) + be(UInt32(0)) + be(s.serverChallenge) + be(s.flags.rawValue) + s.titleID + be(s.durationToExpiry)
                + be(UInt32(s.invalidatedStreamIDs.count)) + s.invalidatedStreamIDs.flatMap { $0 }
        }
    }
}

func be(_ v: UInt32) -> [UInt8] {
    var a: [UInt8] = []
    a.appendBigEndian(v)
    return a
}
func be(_ v: UInt64) -> [UInt8] {
    var a: [UInt8] = []
    a.appendBigEndian(v)
    return a
}
