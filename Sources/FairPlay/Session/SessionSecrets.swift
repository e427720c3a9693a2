/// What the decrypted [SK..R1] block holds (guide table 2-7).
///
/// Never logged; `description` names no byte of it.
package struct SessionSecrets: Sendable, CustomStringConvertible {
    /// SK: encrypts the content key. Nil when Apple's library encrypts the content key itself.
    package let sessionKey: [UInt8]?
    /// The anonymized device ID (the AV adapter's, when the streaming indicator says so).
    package let hu: [UInt8]
    /// 44 random bytes returned in the CKC; SHA-1(R1) keys the anti-replay step.
    package let r1: [UInt8]

    package init(sessionKey: [UInt8]?, hu: [UInt8], r1: [UInt8]) {
        self.sessionKey = sessionKey
        self.hu = hu
        self.r1 = r1
    }

    package var description: String { "SessionSecrets(redacted)" }

    /// Opens [SK..R1] with DASk and checks it against the integrity TLLV (guide, "Session Key and Random
    /// Value Integrity Block").
    ///
    /// - Throws: `integrityError` when bytes 80-95 of the decrypted block differ from the integrity TLLV.
    static func open(_ payload: SPCPayload, dask: [UInt8]) throws(FairPlayError) -> SessionSecrets {
        let block = payload.encryptedSessionKeyR1
        let iv = block.prefix(16)
        var plain = try FairPlayCrypto.aes128CBCDecrypt(key: dask, iv: iv, block.dropFirst(16))
        defer { FairPlayCrypto.cleanse(&plain) }
        guard FairPlayCrypto.constantTimeEqual(plain[80..<96], payload.sessionKeyR1Integrity) else {
            throw FairPlayError(.integrityError, "[SK..R1] integrity value does not match the SPC's integrity TLLV", tag: .sessionKeyR1Integrity)
        }
        return SessionSecrets(sessionKey: Array(plain[0..<16]), hu: Array(plain[16..<36]), r1: Array(plain[36..<80]))
    }
}
