internal import COpenSSL

/// AES-CMAC (NIST SP 800-38B, RFC 4493) with a 128-bit key, through OpenSSL 3's `EVP_MAC` "CMAC" with
/// the cipher "AES-128-CBC": the integrity tag of SPC version 3.
extension FairPlayCrypto {
    /// The 16-byte AES-CMAC of `message` under `key`.
    /// - Throws: `parameterError` for a key that is not 16 bytes; `internalError` when OpenSSL fails.
    package static func aes128CMAC(key: some Collection<UInt8>, _ message: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        var keyBytes = Array(key)
        defer { cleanse(&keyBytes) }
        guard keyBytes.count == 16 else { throw .param("AES-128-CMAC key must be 16 bytes, got \(keyBytes.count)") }
        let input = Array(message)
        let mac = try CMACAlgorithm.get()
        guard let ctx = EVP_MAC_CTX_new(mac) else { throw .internal("EVP_MAC_CTX_new failed: \(drainOpenSSLErrors())") }
        defer { EVP_MAC_CTX_free(ctx) }
        var tag = [UInt8](repeating: 0, count: blockSize)
        var tagLength = 0
        let ok: Bool = keyBytes.withUnsafeBufferPointer { k in
            // The parameter array only borrows these C strings: they live for the closure, which covers EVP_MAC_init.
            CMACAlgorithm.cipherParameter.withCString { name in
                CMACAlgorithm.cipherName.withCString { cipher in
                    var params = [
                        OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: cipher), 0),
                        OSSL_PARAM_construct_end(),
                    ]
                    guard EVP_MAC_init(ctx, k.baseAddress, k.count, &params) == 1 else { return false }
                    let updated = input.withUnsafeBufferPointer { i in i.isEmpty || EVP_MAC_update(ctx, i.baseAddress, i.count) == 1 }
                    guard updated else { return false }
                    return tag.withUnsafeMutableBufferPointer { t in EVP_MAC_final(ctx, t.baseAddress, &tagLength, t.count) == 1 }
                }
            }
        }
        guard ok, tagLength == blockSize else { throw .internal("AES-CMAC failed: \(drainOpenSSLErrors())") }
        return tag
    }
}

/// OpenSSL's CMAC implementation, fetched once per process (see ``OpenSSLAlgorithms``).
private struct CMACAlgorithm: @unchecked Sendable {
    // A fetched EVP_MAC is immutable and safe to share across threads; each call makes its own context.
    let mac: OpaquePointer

    /// `OSSL_MAC_PARAM_CIPHER` and the block cipher CMAC runs on.
    static let cipherParameter = "cipher"
    static let cipherName = "AES-128-CBC"

    static let shared: CMACAlgorithm? = EVP_MAC_fetch(nil, "CMAC", nil).map(CMACAlgorithm.init(mac:))

    static func get() throws(FairPlayError) -> OpaquePointer {
        guard let shared else { throw .internal("OpenSSL default provider lacks CMAC") }
        return shared.mac
    }
}
