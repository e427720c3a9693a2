/// Assembles and encrypts one CKC (guide tables 2-10 and 2-11, "Encrypting the CKC Payload").
struct CKCBuilder {
    let request: SPCRequest
    let content: CKCContent

    /// CKC container version: 1 is the version the guide and SDK 2.0.3-5 clients use (2 only with SDK 26's
    /// library's video R1 key, see ``CKCContentKeyBlock``).
    static let version: UInt32 = 1

    func build() throws(FairPlayError) -> [UInt8] {
        let payload = request.payload
        try validate()

        // Blocks in random order (table 2-11), then the requested SPC blocks unchanged at the end.
        var blocks: [(TLLVTag, [UInt8])] = []
        blocks.reserveCapacity(7)
        let contentKey = try contentKeyTLLV()
        blocks.append((contentKey.tag, contentKey.value))
        blocks.append((.r1, contentKey.r1))
        if let duration = content.keyDuration { blocks.append((.contentKeyDuration, duration.encoded)) }
        if let offline = content.offlineKey { blocks.append((.offlineKey, try offline.encoded())) }
        if let hdcp = content.hdcp {
            var v: [UInt8] = []
            v.appendBigEndian(hdcp.rawValue)
            v.append(contentsOf: FairPlayCrypto.randomBytes(8))
            blocks.append((.hdcpEnforcement, v))
        }
        if let level = content.requiredSecurityLevel {
            var v: [UInt8] = []
            v.appendBigEndian(UInt32(1))
            v.appendBigEndian(UInt32(0))
            v.appendBigEndian(level.rawValue)
            blocks.append((.requiredSecurityLevel, v))
        }
        if !payload.supportedKeyFormats.isEmpty || contentKey.sessionKey == .video {
            // Clients that list key formats also read which session key encrypted the content key: SK,
            // the generic one, unless SDK 26's library used the video session key.
            var v: [UInt8] = []
            v.appendBigEndian(UInt32(1))
            v.appendBigEndian(UInt32(0))
            v.appendBigEndian(contentKey.sessionKey.rawValue)
            blocks.append((.sessionKeyVersionUsed, v))
        }

        var returned: [TLLVBlock] = []
        returned.reserveCapacity(payload.returnRequest.count)
        for tag in payload.returnRequest {
            guard let block = payload.tllvs[tag] else {
                throw FairPlayError(.missingRequiredTag, "the tag return request asks for a TLLV the SPC lacks", tag: tag)
            }
            returned.append(block)
        }

        let size = blocks.reduce(0) { $0 + TLLVWriter.blockSize(valueLength: $1.1.count) } + returned.reduce(0) { $0 + $1.raw.count }
        var writer = TLLVWriter(capacity: size)
        let order = writer.random(blocks.count)
        for i in stride(from: blocks.count - 1, to: 0, by: -1) {
            blocks.swapAt(i, Int(order[i]) % (i + 1))
        }
        for (tag, value) in blocks { writer.append(tag, value) }
        for block in returned { writer.appendRaw(block.raw) }

        let iv = writer.random(16)
        var arKey = Array(FairPlayCrypto.sha1(contentKey.r1).prefix(16))
        defer { FairPlayCrypto.cleanse(&arKey) }
        var encryptedSeed = try FairPlayCrypto.aes128ECBEncrypt(key: arKey, payload.antiReplaySeed)
        defer { FairPlayCrypto.cleanse(&encryptedSeed) }
        let encrypted = try FairPlayCrypto.aes128CBCEncrypt(key: encryptedSeed, iv: iv, writer.bytes)

        var ckc: [UInt8] = []
        ckc.reserveCapacity(28 + encrypted.count)
        ckc.appendBigEndian(contentKey.ckcVersion)
        ckc.appendBigEndian(UInt32(0))
        ckc.append(contentsOf: iv)
        ckc.appendBigEndian(UInt32(encrypted.count))
        ckc.append(contentsOf: encrypted)
        return ckc
    }

    private func validate() throws(FairPlayError) {
        let payload = request.payload
        guard content.contentIV.count == 16 else { throw .param("content IV must be 16 bytes, got \(content.contentIV.count)") }
        if let key = content.contentKey {
            guard key.count == 16 else { throw .param("content key must be 16 bytes, got \(key.count)") }
        } else if payload.playback?.state != .playingOrPaused, payload.sync == nil {
            // Guide table 4-2: state 2 gets a duration answer without a key; "Sync": a sync SPC gets
            // a check-in answer, and a sync never asks for a key.
            throw .param("a content key is required unless the SPC reports playback state 2 or is a sync SPC")
        }
        if content.offlineKey != nil && content.keyDuration != nil {
            throw .param("an offline key TLLV and a content key duration TLLV cannot share a CKC")
        }
        if let duration = content.keyDuration, duration.keyType.isLease, payload.playback == nil {
            throw .param("a lease needs an SPC with a media playback state TLLV")
        }
        if let offline = content.offlineKey {
            if let caps = payload.capabilities, !caps.offlineKey {
                throw .param("the client does not announce offline key support (capability bit 1)")
            }
            if offline.version == 2, payload.capabilities?.offlineKeyV2 != true {
                throw .param("offline key version 2 needs a client with capability bit 3")
            }
        }
        if content.hdcp == .type1, payload.capabilities?.hdcpEnforcement != true {
            throw FairPlayError(.clientSecurityLevel, "HDCP type 1 is released only to clients that enforce HDCP (capability bit 0)")
        }
    }

    private func contentKeyTLLV() throws(FairPlayError) -> CKCContentKeyBlock {
        // Playback state 2 needs no valid key: random bytes fill the slot of the key.
        var key = content.contentKey ?? FairPlayCrypto.randomBytes(16)
        defer { FairPlayCrypto.cleanse(&key) }
        switch request.credential.sessionKeySource {
        case .cryptoLibrary(let library, let provisioning):
            let result = try library.createKeyPayload(
                payload: request.payload, certificateHash: request.credential.certificateHash, provisioningData: provisioning,
                contentKey: key, contentIV: content.contentIV, contentType: content.libraryContentType,
                encryptionScheme: content.encryptionScheme)
            return CKCContentKeyBlock(tag: result.contentKeyTLLVTag, value: result.contentKeyTLLVValue, r1: result.r1,
                                      sessionKey: result.sessionKey, ckcVersion: result.ckcVersion)
        case .applicationSecretKey, .fixedDerivedKey:
            guard let sk = request.secrets.sessionKey else { throw .internal("session key missing for a legacy credential") }
            // Table 2-12: the content IV, then AES-ECB(CK) under SK.
            var value = content.contentIV
            value.append(contentsOf: try FairPlayCrypto.aes128ECBEncrypt(key: sk, key))
            return CKCContentKeyBlock(tag: .encryptedContentKey, value: value, r1: request.secrets.r1, sessionKey: .generic, ckcVersion: Self.version)
        }
    }
}
