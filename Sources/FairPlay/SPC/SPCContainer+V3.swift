import Wire

/// SPC version 3 (FairPlay Streaming Server SDK 26), as SDK 26's `parseSPCV3Header`,
/// `getEncryptionKeyAndIV`, `verifySPCIntegrity` and `decryptSPCData` read it:
///
/// ```
/// version u32 (3) | reserved u32 | protocol UUID (16) | RSA-OAEP-SHA256 wrapped master key (256)
/// | SHA-256 of the certificate (32) | length field (16: 12 bytes SDK 26 skips, then u32 big-endian n)
/// | encrypted TLLVs (n) | AES-CMAC tag (16)
/// ```
///
/// The master key (the first 16 bytes of the RSA plaintext) only seeds three keys: the payload IV, the
/// payload key and the CMAC key are each AES-128-ECB of a fixed seed under it. The tag covers
/// `wrapped key | certificate hash | 8 zero bytes | n as u64 big-endian | encrypted TLLVs`, so the 12
/// skipped bytes of the length field are not authenticated (SDK 26 ignores them; so does this server).
extension SPCContainer {
    /// SDK 26's `V3_PROTOCOL_VERSION_UUID`: any other value is versionErr.
    package static let version3ProtocolUUID: [UInt8] = [
        0x66, 0x44, 0xff, 0x2b, 0xa8, 0x7c, 0x99, 0xb6, 0xff, 0x96, 0x55, 0x27, 0x0c, 0xd0, 0x68, 0xa6,
    ]
    /// SDK 26's `V3_PROTOCOL_ENCRYPTION_KEY_SEED`: AES-ECB of it under the master key is the payload key.
    package static let version3EncryptionKeySeed: [UInt8] = [
        0x70, 0xd1, 0xe6, 0xc3, 0x4f, 0x07, 0xe8, 0x49, 0xb3, 0xa6, 0x24, 0x34, 0x0f, 0x4f, 0x17, 0x6d,
    ]
    /// SDK 26's `V3_PROTOCOL_INTEGRITY_KEY_SEED`: AES-ECB of it under the master key is the CMAC key.
    package static let version3IntegrityKeySeed: [UInt8] = [
        0x96, 0xd3, 0x43, 0x5f, 0x6e, 0xf0, 0x8d, 0x7d, 0x12, 0x1f, 0xa8, 0x6b, 0x25, 0x3e, 0x4a, 0xc9,
    ]
    /// SDK 26's `V3_PROTOCOL_ENCRYPTION_IV_SEED`: AES-ECB of it under the master key is the payload IV.
    package static let version3EncryptionIVSeed: [UInt8] = [
        0xc1, 0x1b, 0x3e, 0xd1, 0xa3, 0x80, 0x3f, 0x4e, 0x13, 0x22, 0xa0, 0x88, 0x03, 0x14, 0x5a, 0xc6,
    ]

    /// Field sizes of the version 3 header.
    static let version3WrappedKeyLength = 256
    static let version3CertificateHashLength = 32
    /// The length field: SDK 26 skips 12 bytes, then reads a big-endian u32.
    static let version3LengthPaddingLength = 12
    static let version3IntegrityTagLength = 16

    /// Reads a version 3 container after its version field.
    ///
    /// Structure only: the integrity tag is checked by ``decryptVersion3Payload(with:)``, after which
    /// trailing bytes are refused; so an altered length that still fits is integrityErr, as in SDK 26.
    /// - Throws: `parameterError` (SDK 26's `readBytes`/`readBigEndianU32`) for every short read and for a
    ///   length that runs past the SPC or leaves no room for the tag; `versionError` for a protocol UUID
    ///   other than ``version3ProtocolUUID``.
    static func parseVersion3(_ reader: inout ByteReader, spcSize: Int) throws(FairPlayError) -> SPCContainer {
        guard reader.readBytes(4) != nil else { throw .param("SPC v3 of \(spcSize) bytes ends in its reserved field") }
        guard let uuid = reader.readBytes(version3ProtocolUUID.count) else {
            throw .param("SPC v3 of \(spcSize) bytes ends in its protocol UUID")
        }
        guard uuid.elementsEqual(version3ProtocolUUID) else {
            throw FairPlayError(.versionError, "SPC v3 protocol UUID \(uuid.hexString) is not SDK 26's \(version3ProtocolUUID.hexString)")
        }
        guard let wrappedKey = reader.readBytes(version3WrappedKeyLength),
            let certificateHash = reader.readBytes(version3CertificateHashLength),
            reader.readBytes(version3LengthPaddingLength) != nil,
            let length = reader.readUInt32()
        else { throw .param("SPC v3 of \(spcSize) bytes is shorter than its header") }
        guard let payloadLength = Int(exactly: length), payloadLength <= reader.remaining,
            let encryptedPayload = reader.readBytes(payloadLength)
        else { throw .param("SPC v3 TLLV length \(length) runs past the \(reader.remaining) bytes present") }
        guard let integrityTag = reader.readBytes(version3IntegrityTagLength) else {
            throw .param("SPC v3 ends \(version3IntegrityTagLength - reader.remaining) bytes short of its integrity tag")
        }
        return SPCContainer(
            version: 3, iv: [], wrappedKey: wrappedKey, certificateHash: certificateHash,
            encryptedPayload: encryptedPayload, integrityTag: integrityTag, trailingBytes: reader.bytes)
    }

    /// The bytes the version 3 integrity tag covers: wrapped key, certificate hash, the length as 16
    /// bytes (8 zero bytes, then a big-endian u64) and the encrypted TLLVs.
    package static func version3AuthenticatedBytes(
        wrappedKey: some Collection<UInt8>, certificateHash: some Collection<UInt8>, encryptedPayload: some Collection<UInt8>
    ) -> [UInt8] {
        var message: [UInt8] = []
        message.reserveCapacity(wrappedKey.count + certificateHash.count + 16 + encryptedPayload.count)
        message.append(contentsOf: wrappedKey)
        message.append(contentsOf: certificateHash)
        message.appendBigEndian(UInt64(0))
        message.appendBigEndian(UInt64(encryptedPayload.count))
        message.append(contentsOf: encryptedPayload)
        return message
    }

    /// Opens a version 3 container: unwraps the master key, derives the keys, checks the AES-CMAC tag in
    /// constant time, then AES-128-CBC-decrypts the TLLVs.
    ///
    /// - Parameter privateKey: the 2048-bit key of the certificate whose SHA-256 the SPC names.
    /// - Returns: the decrypted TLLV bytes. The master key and derived keys are cleansed before returning.
    /// - Throws: `invalidCertificate` when the wrapped key does not decrypt (SDK 26's
    ///   `decryptKeyRSACustom`); `parameterError` for a master key under 16 bytes, bytes after the tag or a
    ///   TLLV length that is not whole AES blocks (SDK 26's `encryptDecryptWithAES`); `integrityError`
    ///   when the tag does not match.
    package func decryptVersion3Payload(with privateKey: RSAPrivateKey) throws(FairPlayError) -> [UInt8] {
        guard version == 3 else { throw .internal("decryptVersion3Payload called on an SPC version \(version) container") }
        // A key that does not decrypt is invalidCertificateErr, as `decryptOAEP` throws it.
        var unwrapped = try privateKey.decryptOAEP(wrappedKey, digest: .sha256)
        defer { FairPlayCrypto.cleanse(&unwrapped) }
        guard unwrapped.count >= 16 else { throw .param("the SPC v3 master key is \(unwrapped.count) bytes, under 16") }
        var masterKey = Array(unwrapped.prefix(16))
        defer { FairPlayCrypto.cleanse(&masterKey) }

        var integrityKey = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, Self.version3IntegrityKeySeed)
        defer { FairPlayCrypto.cleanse(&integrityKey) }
        let message = Self.version3AuthenticatedBytes(wrappedKey: wrappedKey, certificateHash: certificateHash, encryptedPayload: encryptedPayload)
        let tag = try FairPlayCrypto.aes128CMAC(key: integrityKey, message)
        guard FairPlayCrypto.constantTimeEqual(tag, integrityTag) else {
            throw FairPlayError(.integrityError, "SPC v3 integrity tag (AES-CMAC) does not match the container")
        }

        // Stricter than SDK 26, which decrypts whole trailing blocks and ignores them: a device sends none.
        guard trailingBytes.isEmpty else { throw .param("\(trailingBytes.count) bytes follow the SPC v3 integrity tag") }
        guard encryptedPayload.count % FairPlayCrypto.blockSize == 0 else {
            throw .param("SPC v3 TLLV length \(encryptedPayload.count) is not whole AES blocks")
        }
        var payloadKey = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, Self.version3EncryptionKeySeed)
        defer { FairPlayCrypto.cleanse(&payloadKey) }
        let iv = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, Self.version3EncryptionIVSeed)
        return try FairPlayCrypto.aes128CBCDecrypt(key: payloadKey, iv: iv, encryptedPayload)
    }
}
