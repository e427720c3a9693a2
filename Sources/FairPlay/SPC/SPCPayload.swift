/// The decrypted SPC payload with every TLLV of the guide read into typed values.
///
/// Required blocks ([SK..R1], its integrity value, the anti-replay seed, R2 and the asset ID) are
/// non-optional; the rest are nil when absent. Unknown tags stay in `tllvs` and are otherwise ignored.
public struct SPCPayload: Sendable {
    public let tllvs: TLLVList

    /// IV (16) then the 96 encrypted bytes of SK, HU, R1 and the integrity value.
    public let encryptedSessionKeyR1: ArraySlice<UInt8>
    public let sessionKeyR1Integrity: ArraySlice<UInt8>
    public let antiReplaySeed: ArraySlice<UInt8>
    public let r2: ArraySlice<UInt8>
    public let assetID: ArraySlice<UInt8>
    public let transactionID: UInt64?
    public let returnRequest: [TLLVTag]
    public let protocolVersionsSupported: [UInt32]
    public let protocolVersionUsed: UInt32?
    public let streamingIndicator: StreamingIndicator?
    public let playback: MediaPlaybackInfo?
    public let capabilities: Capabilities?
    public let deviceIdentity: DeviceIdentity?
    public let deviceInfo: DeviceInfo?
    /// A valid sync TLLV (version 1 or 2); a sync TLLV of another version leaves this nil (guide, "Sync").
    public let sync: SyncRequest?
    public let kextDenyListVersion: UInt32?
    public let securityLevelReport: SecurityLevelReport?
    public let vmDeviceInfo: VMDeviceInfo?
    public let supportedKeyFormats: [UInt64]

    /// The KDL version that counts: the KDL TLLV's, else the security level report's.
    public var effectiveKDLVersion: UInt32? { kextDenyListVersion ?? securityLevelReport?.kdlVersion }

    /// Reads the typed values, applying the sizes Apple's SDK enforces (fps-facts.md, "SPC container").
    public init(_ tllvs: TLLVList) throws(FairPlayError) {
        self.tllvs = tllvs
        encryptedSessionKeyR1 = try Self.required(tllvs, .sessionKeyR1, exactly: 112)
        sessionKeyR1Integrity = try Self.required(tllvs, .sessionKeyR1Integrity, exactly: 16)
        antiReplaySeed = try Self.required(tllvs, .antiReplaySeed, exactly: 16)
        r2 = try Self.required(tllvs, .r2, exactly: 21)
        assetID = try Self.required(tllvs, .assetID)
        guard (2...200).contains(assetID.count) else {
            throw .parser("asset ID of \(assetID.count) bytes is outside 2...200", tag: .assetID)
        }

        var reader = try Self.optional(tllvs, .transactionID, exactly: 8)
        transactionID = reader?.readUInt64()

        if let value = tllvs[.returnRequest]?.value {
            guard value.count % 8 == 0 else { throw .parser("tag return request of \(value.count) bytes is not a list of 8-byte tags", tag: .returnRequest) }
            var r = ByteReader(value)
            var tags: [TLLVTag] = []
            while let t = r.readUInt64() { tags.append(TLLVTag(t)) }
            returnRequest = tags
        } else {
            returnRequest = []
        }

        if let value = tllvs[.protocolVersionsSupported]?.value {
            guard value.count % 4 == 0, value.count / 4 < 100 else {
                throw .parser("protocol versions supported of \(value.count) bytes is not a list of under 100 4-byte versions", tag: .protocolVersionsSupported)
            }
            var r = ByteReader(value)
            var versions: [UInt32] = []
            while let v = r.readUInt32() { versions.append(v) }
            protocolVersionsSupported = versions
        } else {
            protocolVersionsSupported = []
        }
        reader = try Self.optional(tllvs, .protocolVersionUsed, exactly: 4)
        protocolVersionUsed = reader?.readUInt32()

        reader = try Self.optional(tllvs, .streamingIndicator, exactly: 8)
        streamingIndicator = reader?.readUInt64().map(StreamingIndicator.init(rawValue:))

        if var r = try Self.optional(tllvs, .mediaPlaybackState, exactly: 16),
           let date = r.readUInt32(), let state = r.readUInt32(), let session = r.readUInt64() {
            playback = MediaPlaybackInfo(creationDate: date, state: PlaybackState(rawValue: state), sessionID: session)
        } else {
            playback = nil
        }

        if var r = try Self.optional(tllvs, .capabilities, exactly: 16), let high = r.readUInt64(), let low = r.readUInt64() {
            capabilities = Capabilities(high: high, low: low)
        } else {
            capabilities = nil
        }

        if var r = try Self.optional(tllvs, .deviceIdentity, atLeast: DeviceIdentity.minimumLength),
           let version = r.readUInt32(), let deviceClass = r.readUInt32(), let vendor = r.readUInt64(), let product = r.readUInt64(),
           let ree = r.readUInt32(), let tee = r.readUInt32(), let os = r.readUInt32() {
            deviceIdentity = DeviceIdentity(version: version, deviceClass: deviceClass, vendorHash: vendor, productHash: product, fairPlayVersionREE: ree, fairPlayVersionTEE: tee, osVersion: os)
        } else {
            deviceIdentity = nil
        }

        if var r = try Self.optional(tllvs, .deviceInfo, atLeast: DeviceInfo.minimumLength),
           let type = r.readUInt64(), let os = r.readUInt32(), let version = r.readUInt32() {
            deviceInfo = DeviceInfo(deviceType: type, osVersion: os, version: version)
        } else {
            deviceInfo = nil
        }

        sync = try Self.parseSync(tllvs)

        reader = try Self.optional(tllvs, .kextDenyList, atLeast: 4)
        kextDenyListVersion = reader?.readUInt32()

        if var r = try Self.optional(tllvs, .securityLevelReport, atLeast: 20),
           let version = r.readUInt32(), r.readUInt32() != nil, let level = r.readUInt64(), let kdl = r.readUInt32() {
            securityLevelReport = SecurityLevelReport(version: version, level: SecurityLevel(rawValue: level), kdlVersion: kdl)
        } else {
            securityLevelReport = nil
        }

        if var r = try Self.optional(tllvs, .vmDeviceInfo, atLeast: VMDeviceInfo.minimumLength),
           let version = r.readUInt32(), let hostClass = r.readUInt32(), let hostOS = r.readUInt32(), let hostProto = r.readUInt32(),
           let guestClass = r.readUInt32(), let guestOS = r.readUInt32(), let guestProto = r.readUInt32() {
            vmDeviceInfo = VMDeviceInfo(version: version, hostDeviceClass: hostClass, hostOSVersion: hostOS, hostVirtualizationProtocol: hostProto, guestDeviceClass: guestClass, guestOSVersion: guestOS, guestVirtualizationProtocol: guestProto)
        } else {
            vmDeviceInfo = nil
        }

        if let value = tllvs[.supportedKeyFormats]?.value {
            guard value.count % 8 == 0 else { throw .parser("supported key formats of \(value.count) bytes is not a list of 8-byte formats", tag: .supportedKeyFormats) }
            var r = ByteReader(value)
            var formats: [UInt64] = []
            while let f = r.readUInt64() { formats.append(f) }
            supportedKeyFormats = formats
        } else {
            supportedKeyFormats = []
        }
    }

    private static func parseSync(_ tllvs: TLLVList) throws(FairPlayError) -> SyncRequest? {
        guard let value = tllvs[.sync]?.value else { return nil }
        var r = ByteReader(value)
        guard let version = r.readUInt32() else { throw .parser("sync TLLV shorter than its version field", tag: .sync) }
        switch version {
        case 1:
            guard value.count >= SyncV1.minimumLength else { throw .parser("sync v1 TLLV of \(value.count) bytes is shorter than \(SyncV1.minimumLength)", tag: .sync) }
            _ = r.readUInt32()
            guard let contentID = r.readBytes(16), let duration = r.readUInt32() else { throw .parser("sync v1 TLLV truncated", tag: .sync) }
            return .v1(SyncV1(contentID: Array(contentID), durationToExpiry: duration))
        case 2:
            guard value.count >= SyncV2.minimumLength else { throw .parser("sync v2 TLLV of \(value.count) bytes is shorter than \(SyncV2.minimumLength)", tag: .sync) }
            _ = r.readUInt32()
            guard let challenge = r.readUInt64(), let flags = r.readUInt64(), let title = r.readBytes(16),
                  let duration = r.readUInt32(), let records = r.readUInt32()
            else { throw .parser("sync v2 TLLV truncated", tag: .sync) }
            guard Int(records) <= r.remaining / 16 else {
                throw .parser("sync v2 TLLV claims \(records) invalidated stream IDs but holds room for \(r.remaining / 16)", tag: .sync)
            }
            var ids: [[UInt8]] = []
            ids.reserveCapacity(Int(records))
            for _ in 0..<records {
                guard let id = r.readBytes(16) else { break }
                ids.append(Array(id))
            }
            return .v2(SyncV2(serverChallenge: challenge, flags: SyncFlags(rawValue: flags), titleID: Array(title), durationToExpiry: duration, invalidatedStreamIDs: ids))
        default:
            // "Valid Sync TLLVs will have the Version field set to 1 or 2. Any other value is invalid.
            // A Sync SPC is one with a valid Sync TLLV." Such an SPC is an ordinary one.
            return nil
        }
    }

    private static func required(_ tllvs: TLLVList, _ tag: TLLVTag, exactly length: Int? = nil) throws(FairPlayError) -> ArraySlice<UInt8> {
        guard let block = tllvs[tag] else {
            throw FairPlayError(.missingRequiredTag, "required TLLV \(tag.name ?? "") is missing", tag: tag)
        }
        if let length, block.value.count != length {
            throw .parser("\(tag.name ?? "TLLV") value is \(block.value.count) bytes, expected \(length)", tag: tag)
        }
        return block.value
    }

    private static func optional(_ tllvs: TLLVList, _ tag: TLLVTag, exactly length: Int) throws(FairPlayError) -> ByteReader? {
        guard let block = tllvs[tag] else { return nil }
        guard block.value.count == length else {
            throw .parser("\(tag.name ?? "TLLV") value is \(block.value.count) bytes, expected \(length)", tag: tag)
        }
        return ByteReader(block.value)
    }

    private static func optional(_ tllvs: TLLVList, _ tag: TLLVTag, atLeast length: Int) throws(FairPlayError) -> ByteReader? {
        guard let block = tllvs[tag] else { return nil }
        guard block.value.count >= length else {
            throw .parser("\(tag.name ?? "TLLV") value is \(block.value.count) bytes, at least \(length) expected", tag: tag)
        }
        return ByteReader(block.value)
    }
}
