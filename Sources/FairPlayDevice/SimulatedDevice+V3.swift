import FairPlay

/// SPC version 3 (SDK 26 clients): the container and the video session key TLLVs.
///
/// Written from the container layout in fps-facts.md and SDK 26's parser, independently of the
/// server's reader (only the published constants are shared), so a test of one checks the other.
extension SimulatedDevice {
    /// [SK..R1] v3 and R2 v3 with random values of plausible sizes (SDK 26 allows up to 256 and 64 bytes).
    /// Only Apple's library can open real ones; no KSM in this project reads their contents.
    static func videoSessionKeyTLLVs() -> [(TLLVTag, [UInt8])] {
        [(.sessionKeyR1V3, FairPlayCrypto.randomBytes(144)), (.r2V3, FairPlayCrypto.randomBytes(32))]
    }

    /// Wraps a plaintext TLLV payload in an SPC version 3 container.
    ///
    /// A random 16-byte master key, RSA-OAEP-SHA256 wrapped under the certificate's 2048-bit key; the
    /// payload key, IV and CMAC key are AES-ECB of SDK 26's seeds under it; the CMAC covers the wrapped
    /// key, the certificate's SHA-256, the length as 8 zero bytes and a u64, and the encrypted TLLVs.
    /// - Throws: `parameterError` when the trust has no 2048-bit key.
    func makeVersion3Container(_ payload: [UInt8]) throws(FairPlayError) -> [UInt8] {
        guard let key = trust.publicKey2048 else { throw FairPlayError(.parameterError, "device trust has no 2048-bit key for SPC v3") }
        var masterKey = FairPlayCrypto.randomBytes(16)
        defer { FairPlayCrypto.cleanse(&masterKey) }
        let wrapped = try key.encryptOAEP(masterKey, digest: .sha256)
        let payloadKey = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, SPCContainer.version3EncryptionKeySeed)
        let iv = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, SPCContainer.version3EncryptionIVSeed)
        let integrityKey = try FairPlayCrypto.aes128ECBEncrypt(key: masterKey, SPCContainer.version3IntegrityKeySeed)
        let encrypted = try FairPlayCrypto.aes128CBCEncrypt(key: payloadKey, iv: iv, payload)

        // The length field as the device writes it: 12 zero bytes, then the length as a big-endian u32.
        var lengthField = [UInt8](repeating: 0, count: 12)
        lengthField.appendBigEndian(UInt32(encrypted.count))
        // What the tag covers spells the length as 16 bytes too, but as 8 zero bytes and a u64.
        var authenticated = wrapped + trust.certificateSHA256
        authenticated.append(contentsOf: [UInt8](repeating: 0, count: 8))
        authenticated.appendBigEndian(UInt64(encrypted.count))
        authenticated.append(contentsOf: encrypted)
        let tag = try FairPlayCrypto.aes128CMAC(key: integrityKey, authenticated)

        var spc: [UInt8] = []
        spc.reserveCapacity(8 + 16 + wrapped.count + 32 + 16 + encrypted.count + 16)
        spc.appendBigEndian(UInt32(3))
        spc.appendBigEndian(UInt32(0))
        spc.append(contentsOf: SPCContainer.version3ProtocolUUID)
        spc.append(contentsOf: wrapped)
        spc.append(contentsOf: trust.certificateSHA256)
        spc.append(contentsOf: lengthField)
        spc.append(contentsOf: encrypted)
        spc.append(contentsOf: tag)
        return spc
    }
}
