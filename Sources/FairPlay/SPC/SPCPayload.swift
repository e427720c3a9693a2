/// The decrypted SPC payload with every TLLV Apple's SDK 26 reads turned into typed values.
///
/// The nine blocks SDK 26 requires are non-optional; the rest are nil when absent or, where SDK 26
/// ignores a version it does not know, when of such a version. Unknown tags stay in `tllvs` and are
/// otherwise ignored. docs/apple-fidelity.md lists each rule with the SDK 26 function it follows.
package struct SPCPayload: Sendable {
    package let tllvs: TLLVList

    /// IV (16) then the 96 encrypted bytes of SK, HU, R1 and the integrity value.
    package let encryptedSessionKeyR1: ArraySlice<UInt8>
    package let sessionKeyR1Integrity: ArraySlice<UInt8>
    package let antiReplaySeed: ArraySlice<UInt8>
    package let r2: ArraySlice<UInt8>
    package let assetID: ArraySlice<UInt8>
    package let transactionID: UInt64
    /// The tags the CKC must return, in request order, each once (SDK 26 drops a repeat).
    package let returnRequest: [TLLVTag]
    package let protocolVersionsSupported: [UInt32]
    package let protocolVersionUsed: UInt32
    package let streamingIndicator: StreamingIndicator?
    package let playback: MediaPlaybackInfo?
    package let capabilities: Capabilities?
    package let deviceIdentity: DeviceIdentity?
    package let deviceInfo: DeviceInfo?
    /// A sync TLLV of version 1 or 2; nil for none or another version (see `syncVersion`).
    package let sync: SyncRequest?
    /// The version field of any sync TLLV, known or not: SDK 26 reports it in `offline-sync` whatever it is.
    package let syncVersion: UInt32?
    /// The KDL TLLV's own value, if the SPC has one.
    package let kextDenyListVersion: UInt32?
    /// The Kext Deny List version that counts, as SDK 26 keeps it: 0 when none was reported.
    package let kdlVersion: UInt32
    /// A plaintext (version 1) security level report; nil for none, the encrypted form or another version.
    package let securityLevelReport: SecurityLevelReport?
    /// True when the SPC carried the 32-byte encrypted security level report, which SDK 26 ignores.
    package let hasEncryptedSecurityLevelReport: Bool
    /// A version 1 VM device info TLLV; SDK 26 treats any other version as no VM information.
    package let vmDeviceInfo: VMDeviceInfo?
    /// Key formats from a version 1 supported key formats TLLV; empty for none or another version.
    package let supportedKeyFormats: [UInt64]
    /// [SK..R1] v3 and R2 v3 of SDK 26 clients, handed to Apple's library.
    package let sessionKeyR1V3: ArraySlice<UInt8>?
    package let r2V3: ArraySlice<UInt8>?

    /// The KDL version that counts, nil when none was reported (0).
    package var effectiveKDLVersion: UInt32? { kdlVersion == 0 ? nil : kdlVersion }

    /// Tags SDK 26's `validateTLLVs` requires in every SPC.
    package static let requiredTags: [TLLVTag] = [
        .sessionKeyR1, .antiReplaySeed, .r2, .assetID, .transactionID, .protocolVersionUsed,
        .protocolVersionsSupported, .returnRequest, .sessionKeyR1Integrity,
    ]

    /// Largest number of key formats SDK 26 accepts in the supported key formats TLLV.
    package static let maximumKeyFormats = 64
    /// SDK 26 refuses a versions-supported list once it reaches this many entries.
    package static let maximumProtocolVersions = 100
    /// SDK 26 refuses a sync v2 TLLV that claims more invalidated records than this (internalErr).
    package static let maximumInvalidatedRecords = 250

    /// Reads the blocks in payload order, as SDK 26's `parseSPCData` does, so that of two faults the
    /// first in the payload decides; then the tag return request; then the required tags.
    package init(_ tllvs: TLLVList) throws(FairPlayError) {
        self.tllvs = tllvs
        var skR1: ArraySlice<UInt8>?
        var integrity: ArraySlice<UInt8>?
        var arSeed: ArraySlice<UInt8>?
        var r2: ArraySlice<UInt8>?
        var asset: ArraySlice<UInt8>?
        var transaction: UInt64?
        var versionUsed: UInt32?
        var versions: [UInt32] = []
        var requested: [TLLVTag] = []
        var indicator: StreamingIndicator?
        var playback: MediaPlaybackInfo?
        var capabilities: Capabilities?
        var identity: DeviceIdentity?
        var info: DeviceInfo?
        var sync: SyncRequest?
        var syncVersion: UInt32?
        var kdlTLLV: UInt32?
        var kdl: UInt32 = 0
        var report: SecurityLevelReport?
        var encryptedReport = false
        var vm: VMDeviceInfo?
        var formats: [UInt64] = []
        var skR1V3: ArraySlice<UInt8>?
        var r2V3: ArraySlice<UInt8>?

        for block in tllvs.blocks {
            let v = TLLVValueReader(block)
            switch block.tag {
            case .sessionKeyR1:
                try v.require(exactly: 112, .parserError)
                skR1 = block.value
            case .sessionKeyR1Integrity:
                try v.require(exactly: 16, .parserError)
                integrity = block.value
            case .antiReplaySeed:
                try v.require(exactly: 16, .parserError)
                arSeed = block.value
            case .r2:
                try v.require(exactly: 21, .parserError)
                r2 = block.value
            case .assetID:
                guard (2...200).contains(v.count) else { throw .parser("asset ID of \(v.count) bytes is outside 2...200", tag: .assetID) }
                asset = block.value
            case .transactionID:
                try v.require(exactly: 8, .parserError)
                transaction = try v.uint64(at: 0)
            case .protocolVersionUsed:
                try v.require(exactly: 4, .parserError)
                versionUsed = try v.uint32(at: 0)
            case .protocolVersionsSupported:
                guard v.count % 4 == 0 else {
                    throw .parser("protocol versions supported of \(v.count) bytes is not a list of 4-byte versions", tag: block.tag)
                }
                guard v.count / 4 < Self.maximumProtocolVersions else {
                    throw .param(
                        "protocol versions supported lists \(v.count / 4) versions; at most \(Self.maximumProtocolVersions - 1) are accepted", tag: block.tag)
                }
                versions = try (0..<v.count / 4).map { i throws(FairPlayError) in try v.uint32(at: 4 * i) }
            case .returnRequest:
                guard v.count % 8 == 0 else { throw .parser("tag return request of \(v.count) bytes is not a list of 8-byte tags", tag: block.tag) }
                requested = try (0..<v.count / 8).map { i throws(FairPlayError) in TLLVTag(try v.uint64(at: 8 * i)) }
            case .streamingIndicator:
                try v.require(exactly: 8, .parserError)
                indicator = StreamingIndicator(rawValue: try v.uint64(at: 0))
            case .mediaPlaybackState:
                try v.require(exactly: 16, .parameterError)
                playback = MediaPlaybackInfo(
                    creationDate: try v.uint32(at: 0), state: PlaybackState(rawValue: try v.uint32(at: 4)), sessionID: try v.uint64(at: 8))
            case .capabilities:
                try v.require(exactly: 16, .parameterError)
                capabilities = Capabilities(high: try v.uint64(at: 0), low: try v.uint64(at: 8))
            case .deviceIdentity:
                identity = DeviceIdentity(
                    version: try v.uint32(at: 0), deviceClass: try v.uint32(at: 4), vendorHash: try v.uint64(at: 8), productHash: try v.uint64(at: 16),
                    fairPlayVersionREE: try v.uint32(at: 24), fairPlayVersionTEE: try v.uint32(at: 28), osVersion: try v.uint32(at: 32))
            case .deviceInfo:
                info = DeviceInfo(deviceType: try v.uint64(at: 0), osVersion: try v.uint32(at: 8), version: try v.uint32(at: 12))
            case .sync:
                (syncVersion, sync) = try Self.parseSync(v)
            case .kextDenyList:
                try v.require(exactly: 4, .parserError)
                kdlTLLV = try v.uint32(at: 0)
                kdl = kdlTLLV ?? 0
            case .securityLevelReport:
                if v.count == SecurityLevelReport.encryptedLength {
                    // SDK 26: the encrypted report is ignored.
                    encryptedReport = true
                    break
                }
                let version = try v.uint32(at: 0)
                guard version == 1 else { break }
                guard try v.uint32(at: 4) == 0 else { throw .param("security level report has a non-zero reserved field", tag: block.tag) }
                let level = SecurityLevel(rawValue: try v.uint64(at: 8))
                let reportedKDL = try v.uint32(at: 16)
                report = SecurityLevelReport(version: version, level: level, kdlVersion: reportedKDL)
                // SDK 26 keeps a KDL the KDL TLLV already gave; the report's fills in only a zero.
                if kdl == 0 { kdl = reportedKDL }
            case .vmDeviceInfo:
                let version = try v.uint32(at: 0)
                if version == 1 {
                    vm = VMDeviceInfo(
                        version: version, hostDeviceClass: try v.uint32(at: 4), hostOSVersion: try v.uint32(at: 8),
                        hostVirtualizationProtocol: try v.uint32(at: 12),
                        guestDeviceClass: try v.uint32(at: 16), guestOSVersion: try v.uint32(at: 20), guestVirtualizationProtocol: try v.uint32(at: 24))
                } else {
                    vm = nil
                }
            case .supportedKeyFormats:
                // {version, reserved, count, count x 8-byte formats}; SDK 26 ignores a version other than 1.
                guard try v.uint32(at: 0) == 1 else { break }
                _ = try v.uint32(at: 4)
                let count = try v.uint32(at: 8)
                guard count <= UInt32(Self.maximumKeyFormats) else {
                    throw .param("supported key formats lists \(count) formats; at most \(Self.maximumKeyFormats) are accepted", tag: block.tag)
                }
                formats = try (0..<Int(count)).map { i throws(FairPlayError) in try v.uint64(at: 12 + 8 * i) }
            case .sessionKeyR1V3:
                guard v.count <= Self.maximumVideoSessionKeyR1Length else {
                    throw .parser("[SK..R1] v3 of \(v.count) bytes exceeds \(Self.maximumVideoSessionKeyR1Length)", tag: block.tag)
                }
                skR1V3 = block.value
            case .r2V3:
                guard v.count <= Self.maximumVideoR2Length else {
                    throw .parser("R2 v3 of \(v.count) bytes exceeds \(Self.maximumVideoR2Length)", tag: block.tag)
                }
                r2V3 = block.value
            default:
                // Apple's SPCs carry reserved TLLVs with unlisted tags: skipped, never rejected.
                break
            }
        }

        // SDK 26 extractReturnTags: every requested tag must be in the SPC; a repeat is returned once.
        var unique: [TLLVTag] = []
        unique.reserveCapacity(requested.count)
        for tag in requested where !unique.contains(tag) {
            guard tllvs[tag] != nil else {
                throw FairPlayError(.missingRequiredTag, "the tag return request asks for a TLLV the SPC lacks", tag: tag)
            }
            unique.append(tag)
        }

        // SDK 26 validateTLLVs.
        guard let skR1, let integrity, let arSeed, let r2, let asset, let transaction, let versionUsed,
            tllvs[.protocolVersionsSupported] != nil, tllvs[.returnRequest] != nil
        else {
            let missing = Self.requiredTags.first { tllvs[$0] == nil }
            throw FairPlayError(.missingRequiredTag, "required TLLV \(missing?.name ?? "") is missing", tag: missing)
        }
        encryptedSessionKeyR1 = skR1
        sessionKeyR1Integrity = integrity
        antiReplaySeed = arSeed
        self.r2 = r2
        assetID = asset
        transactionID = transaction
        returnRequest = unique
        protocolVersionsSupported = versions
        protocolVersionUsed = versionUsed
        streamingIndicator = indicator
        self.playback = playback
        self.capabilities = capabilities
        deviceIdentity = identity
        deviceInfo = info
        self.sync = sync
        self.syncVersion = syncVersion
        kextDenyListVersion = kdlTLLV
        kdlVersion = kdl
        securityLevelReport = report
        hasEncryptedSecurityLevelReport = encryptedReport
        vmDeviceInfo = vm
        supportedKeyFormats = formats
        sessionKeyR1V3 = skR1V3
        self.r2V3 = r2V3
    }

    /// SDK 26 `parseTagOfflineSync`: version and reserved first; v1 needs a zero reserved field and
    /// reads its duration at byte 24; v2 reads its fields at fixed offsets and at most 250 records;
    /// any other version is kept as a number only.
    private static func parseSync(_ v: TLLVValueReader) throws(FairPlayError) -> (UInt32, SyncRequest?) {
        let version = try v.uint32(at: 0)
        let reserved = try v.uint32(at: 4)
        switch version {
        case 1:
            guard reserved == 0 else { throw .param("sync v1 TLLV has a non-zero reserved field", tag: v.tag) }
            let duration = try v.uint32(at: 24)
            return (1, .v1(SyncV1(contentID: Array(try v.bytes(at: 8, count: 16)), durationToExpiry: duration)))
        case 2:
            let challenge = try v.uint64(at: 8)
            let flags = try v.uint64(at: 16)
            let title = try v.bytes(at: 24, count: 16)
            let duration = try v.uint32(at: 40)
            let records = try v.uint32(at: 44)
            guard records <= UInt32(maximumInvalidatedRecords) else {
                throw FairPlayError(
                    .internalError, "sync v2 TLLV claims \(records) invalidated records; at most \(maximumInvalidatedRecords) are accepted", tag: v.tag)
            }
            let ids = try v.bytes(at: 48, count: Int(records) * 16)
            let list = (0..<Int(records)).map { i in Array(ids[ids.startIndex + 16 * i..<ids.startIndex + 16 * (i + 1)]) }
            return (
                2,
                .v2(
                    SyncV2(
                        serverChallenge: challenge, flags: SyncFlags(rawValue: flags), titleID: Array(title), durationToExpiry: duration,
                        invalidatedStreamIDs: list))
            )
        default:
            return (version, nil)
        }
    }
}
