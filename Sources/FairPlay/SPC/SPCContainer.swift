/// The cleartext header of an SPC (guide table 2-3; SDK 26 for version 3) and its still-encrypted payload.
package struct SPCContainer: Sendable {
    /// 1 (RSA-1024, OAEP SHA-1), 2 (RSA-2048, OAEP SHA-256) or 3 (SDK 26: RSA-2048 OAEP SHA-256, AES-CMAC).
    package let version: UInt32
    /// The payload IV of versions 1 and 2. Empty for version 3, whose IV is derived from the master key.
    package let iv: ArraySlice<UInt8>
    /// The payload key (SPCK; for version 3 the master key) wrapped with RSA-OAEP under the certificate's key.
    package let wrappedKey: ArraySlice<UInt8>
    /// Selects the private key: SHA-1 of the DER Application Certificate (versions 1 and 2), SHA-256 (version 3).
    package let certificateHash: ArraySlice<UInt8>
    /// Every byte after the header: SDK 26 decrypts all of it and reads TLLVs from the first `payloadLength`.
    package let encryptedPayload: ArraySlice<UInt8>
    /// The payload length the header declares.
    package let payloadLength: Int
    /// Version 3: the 16-byte AES-CMAC tag after the encrypted TLLVs. Empty for versions 1 and 2.
    package let integrityTag: ArraySlice<UInt8>
    /// Version 3: bytes after the integrity tag, refused once the tag is checked (see `SPCContainer+V3`).
    /// Always empty for versions 1 and 2, whose parse refuses them.
    package let trailingBytes: ArraySlice<UInt8>

    /// Largest SPC accepted; Apple's SPCs are a few KiB. Checked before anything is allocated (a
    /// deliberate cap that Apple's SDK does not have: docs/apple-fidelity.md).
    package static let maximumSize = 64 * 1024

    package var oaepDigest: OAEPDigest { version == 1 ? .sha1 : .sha256 }

    init(
        version: UInt32, iv: ArraySlice<UInt8>, wrappedKey: ArraySlice<UInt8>, certificateHash: ArraySlice<UInt8>,
        encryptedPayload: ArraySlice<UInt8>, payloadLength: Int? = nil, integrityTag: ArraySlice<UInt8> = [], trailingBytes: ArraySlice<UInt8> = []
    ) {
        self.payloadLength = payloadLength ?? encryptedPayload.count
        self.version = version
        self.iv = iv
        self.wrappedKey = wrappedKey
        self.certificateHash = certificateHash
        self.encryptedPayload = encryptedPayload
        self.integrityTag = integrityTag
        self.trailingBytes = trailingBytes
    }

    /// Splits an SPC into its fields, with the checks of SDK 26's `parseSPCContainer`.
    ///
    /// - Throws: `memoryError` above `maximumSize`; `spcVersionError` for a version other than 1, 2 or
    ///   3; `parameterError` when the header is short or the declared payload runs past the SPC; for
    ///   version 3 what ``parseVersion3(_:spcSize:)`` throws. Bytes after a v1/v2 payload are kept:
    ///   SDK 26 decrypts them with the payload and ignores them, so the whole rest must be a non-empty
    ///   multiple of 16 (checked when it is decrypted, after the certificate, as there).
    package static func parse(_ spc: ArraySlice<UInt8>) throws(FairPlayError) -> SPCContainer {
        guard spc.count <= maximumSize else {
            throw FairPlayError(.memoryError, "SPC of \(spc.count) bytes exceeds the \(maximumSize)-byte limit")
        }
        var reader = ByteReader(spc)
        guard let version = reader.readUInt32() else { throw .param("SPC shorter than its 4-byte version field") }
        let keyLength: Int
        switch version {
        case 1: keyLength = 128
        case 2: keyLength = 256
        case 3: return try parseVersion3(&reader, spcSize: spc.count)
        default: throw FairPlayError(.spcVersionError, "unsupported SPC version \(version)")
        }
        guard reader.readBytes(4) != nil,
            let iv = reader.readBytes(16),
            let wrappedKey = reader.readBytes(keyLength),
            let certificateHash = reader.readBytes(20),
            let payloadLength = reader.readUInt32()
        else { throw .param("SPC of \(spc.count) bytes is shorter than the version \(version) header") }
        guard let declared = Int(exactly: payloadLength), declared <= reader.remaining else {
            throw .param("SPC payload length \(payloadLength) runs past the \(reader.remaining) bytes present")
        }
        return SPCContainer(
            version: version, iv: iv, wrappedKey: wrappedKey, certificateHash: certificateHash, encryptedPayload: reader.bytes, payloadLength: declared)
    }
}
