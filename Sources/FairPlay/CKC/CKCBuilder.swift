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

        // The blocks SDK 26 always sends (base_ckc_construct populateCKCTLLVs), in random order
        // (table 2-11), then the requested SPC blocks unchanged at the end.
        var blocks: [(TLLVTag, [UInt8])] = []
        blocks.reserveCapacity(6)
        let contentKey = try contentKeyTLLV()
        blocks.append((contentKey.tag, contentKey.value))
        blocks.append((.r1, contentKey.r1))
        var keyKind: [UInt8] = []
        keyKind.appendBigEndian(UInt32(1))
        keyKind.appendBigEndian(UInt32(0))
        keyKind.appendBigEndian(contentKey.sessionKey.rawValue)
        blocks.append((.sessionKeyVersionUsed, keyKind))
        var hdcp: [UInt8] = []
        hdcp.appendBigEndian(content.hdcp.rawValue)
        hdcp.append(contentsOf: FairPlayCrypto.randomBytes(8))
        blocks.append((.hdcpEnforcement, hdcp))
        var level: [UInt8] = []
        level.appendBigEndian(UInt32(1))
        level.appendBigEndian(UInt32(0))
        level.appendBigEndian(content.requiredSecurityLevel.rawValue)
        blocks.append((.requiredSecurityLevel, level))
        // SDK 26 populateTagsCustom: key terms only for an SPC with a media playback state TLLV; how
        // offline terms travel is OfflineDelivery's rule, which the worker's policy engine asks too.
        if let offline = content.offlineKey {
            switch offline.delivery(capabilities: payload.capabilities, hasPlaybackState: payload.playback != nil) {
            case .offlineKey: blocks.append((.offlineKey, try offline.encoded()))
            case .contentKeyDuration(let duration): blocks.append((.contentKeyDuration, duration.encoded))
            case .noTerms: break
            }
        } else if payload.playback != nil, let duration = content.keyDuration {
            blocks.append((.contentKeyDuration, duration.encoded))
        }

        var returned: [TLLVBlock] = []
        returned.reserveCapacity(payload.returnRequest.count)
        for tag in payload.returnRequest {
            // SPCPayload checked that every requested tag is present.
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
        // SDK 26 checkBusinessRules: a lease together with an offline key is a parameter error.
        if content.offlineKey != nil && content.keyDuration != nil {
            throw .param("an offline key and a content key duration cannot share a CKC")
        }
        // SDK 26 checkBusinessRules: HDCP type 1 only for clients with capability bit 0.
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
            return CKCContentKeyBlock(
                tag: result.contentKeyTLLVTag, value: result.contentKeyTLLVValue, r1: result.r1,
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
