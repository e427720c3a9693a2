import FairPlay

/// Opens a CKC the way a device does and checks everything a device checks.
public enum CKCOpener {
    /// Decrypts and checks a CKC for a session.
    ///
    /// AR key = SHA-1(R1)[0..16]; payload key = AES-ECB(AR key, AR seed); payload AES-CBC under the CKC IV.
    /// - Throws: `InvalidCKC` for a bad container, an R1 that is not the session's, a missing or malformed
    ///   content key, a returned block that differs from the SPC's, or an offline key beside a duration TLLV.
    public static func open(_ ckc: [UInt8], session: DeviceSession) throws(InvalidCKC) -> OpenedCKC {
        var reader = ByteReader(ckc)
        guard let version = reader.readUInt32(), reader.readBytes(4) != nil, let iv = reader.readBytes(16), let length = reader.readUInt32() else {
            throw InvalidCKC("CKC of \(ckc.count) bytes is shorter than its 28-byte header")
        }
        guard version == 1 || version == 2 else { throw InvalidCKC("CKC version \(version)") }
        guard Int(length) == reader.remaining, length % 16 == 0, length > 0 else {
            throw InvalidCKC("payload length \(length) disagrees with \(reader.remaining) bytes present or is not whole blocks")
        }
        let plain: [UInt8]
        let list: TLLVList
        do {
            let arKey = Array(FairPlayCrypto.sha1(session.r1).prefix(16))
            let payloadKey = try FairPlayCrypto.aes128ECBEncrypt(key: arKey, session.antiReplaySeed)
            plain = try FairPlayCrypto.aes128CBCDecrypt(key: payloadKey, iv: iv, reader.bytes)
            list = try TLLVList.parse(plain[...])
        } catch {
            throw InvalidCKC("payload does not decrypt to TLLVs: \(error.reason)")
        }
        guard let r1 = list[.r1], Array(r1.value) == session.r1 else { throw InvalidCKC("R1 TLLV missing or not the session's R1") }
        guard let ck = list[.encryptedContentKey], ck.value.count == 32 else { throw InvalidCKC("content key TLLV missing or not 32 bytes") }
        let contentKey: [UInt8]
        do {
            contentKey = try FairPlayCrypto.aes128ECBDecrypt(key: session.sessionKey, ck.value.dropFirst(16))
        } catch {
            throw InvalidCKC("content key does not decrypt")
        }
        for (tag, raw) in session.requestedBlocks {
            guard let block = list[tag], Array(block.raw) == raw else { throw InvalidCKC("requested TLLV \(tag) not returned unchanged") }
        }

        var duration: ContentKeyDuration?
        if let block = list[.contentKeyDuration] {
            var r = ByteReader(block.value)
            guard block.value.count == 16, let lease = r.readUInt32(), let rental = r.readUInt32(), let type = r.readUInt32(), let reserved = r.readUInt32()
            else {
                throw InvalidCKC("content key duration TLLV is not 16 bytes")
            }
            duration = ContentKeyDuration(leaseSeconds: lease, rentalSeconds: rental, keyType: .init(rawValue: type), reserved: reserved)
        }
        var offline: OfflineKey?
        if let block = list[.offlineKey] {
            guard duration == nil else { throw InvalidCKC("offline key TLLV together with a content key duration TLLV") }
            var r = ByteReader(block.value)
            guard let v = r.readUInt32(), r.readUInt32() != nil, let id = r.readBytes(16), let storage = r.readUInt32(), let playback = r.readUInt32() else {
                throw InvalidCKC("offline key TLLV truncated")
            }
            var title: [UInt8]?
            if v == 2 {
                guard let t = r.readBytes(16) else { throw InvalidCKC("offline key v2 without title ID") }
                guard session.capabilities?.offlineKeyV2 == true else { throw InvalidCKC("offline key v2 sent to a client without capability bit 3") }
                title = Array(t)
            }
            offline = OfflineKey(version: v, contentID: Array(id), storageDuration: storage, playbackDuration: playback, titleID: title)
        }
        var hdcp: HDCPRequirement?
        if let block = list[.hdcpEnforcement] {
            var r = ByteReader(block.value)
            guard block.value.count == 16, let level = r.readUInt64() else { throw InvalidCKC("HDCP TLLV is not 16 bytes") }
            hdcp = HDCPRequirement(rawValue: level)
        }
        var level: SecurityLevel?
        if let block = list[.requiredSecurityLevel] {
            var r = ByteReader(block.value)
            guard r.readUInt32() != nil, r.readUInt32() != nil, let l = r.readUInt64() else { throw InvalidCKC("required security level TLLV truncated") }
            level = SecurityLevel(rawValue: l)
        }
        var kind: UInt64?
        if let block = list[.sessionKeyVersionUsed] {
            var r = ByteReader(block.value)
            guard r.readUInt32() != nil, r.readUInt32() != nil, let k = r.readUInt64() else { throw InvalidCKC("session key version TLLV truncated") }
            kind = k
        }
        return OpenedCKC(
            contentKey: contentKey, contentIV: Array(ck.value.prefix(16)), keyDuration: duration, offlineKey: offline,
            hdcp: hdcp, requiredSecurityLevel: level, sessionKeyKind: kind, tags: list.tags)
    }
}
