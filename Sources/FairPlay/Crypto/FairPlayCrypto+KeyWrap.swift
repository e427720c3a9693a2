internal import COpenSSL

/// AES Key Wrap (RFC 3394) with the default initial value A6A6A6A6A6A6A6A6, through OpenSSL EVP
/// ("AES-128-WRAP" / "AES-256-WRAP", the ciphers also named id-aes128-wrap / id-aes256-wrap).
///
/// Used to keep content keys wrapped under a tenant's key-encryption key (KEK) wherever they rest
/// (Redis, Kafka never sees them at all). The KEK is 16 or 32 bytes; the key to wrap is a multiple of
/// 8 bytes, at least 16 (RFC 3394 section 2: n >= 2 64-bit blocks); the output is 8 bytes longer.
extension FairPlayCrypto {
    /// Wraps `key` under `kek` (RFC 3394 section 2.2.1).
    /// - Throws: `parameterError` for a KEK that is not 16 or 32 bytes or a key that is not n x 8
    ///   bytes with n >= 2; `internalError` when OpenSSL fails.
    package static func aesKeyWrap(kek: some Collection<UInt8>, key: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        var kekBytes = Array(kek)
        var keyBytes = Array(key)
        defer {
            cleanse(&kekBytes)
            cleanse(&keyBytes)
        }
        guard keyBytes.count >= 16, keyBytes.count % 8 == 0 else {
            throw .param("key to wrap is \(keyBytes.count) bytes; RFC 3394 needs a multiple of 8, at least 16")
        }
        return try keyWrapCipher(kek: kekBytes, input: keyBytes, encrypt: true)
    }

    /// Unwraps a key wrapped by ``aesKeyWrap(kek:key:)`` and checks its integrity value (RFC 3394
    /// section 2.2.3). The caller owns the returned key and should ``cleanse(_:)`` it after use.
    /// - Throws: `parameterError` for a KEK that is not 16 or 32 bytes or wrapped bytes that are not
    ///   n x 8 bytes with n >= 3; `internalError` "integrity check failed" when the KEK is wrong or the
    ///   wrapped bytes were altered.
    package static func aesKeyUnwrap(kek: some Collection<UInt8>, wrapped: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        var kekBytes = Array(kek)
        defer { cleanse(&kekBytes) }
        let input = Array(wrapped)
        guard input.count >= 24, input.count % 8 == 0 else {
            throw .param("wrapped key is \(input.count) bytes; RFC 3394 output is a multiple of 8, at least 24")
        }
        return try keyWrapCipher(kek: kekBytes, input: input, encrypt: false)
    }

    /// Overwrites key material in a buffer the caller owns, in a way the optimizer cannot drop.
    package static func cleanse(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        OPENSSL_cleanse(base, buffer.count)
    }

    private static func keyWrapCipher(kek: [UInt8], input: [UInt8], encrypt: Bool) throws(FairPlayError) -> [UInt8] {
        let algorithm: OpaquePointer
        switch kek.count {
        case 16: algorithm = try KeyWrapAlgorithms.get().aes128
        case 32: algorithm = try KeyWrapAlgorithms.get().aes256
        default: throw .param("key-encryption key must be 16 or 32 bytes, got \(kek.count)")
        }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .internal("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        // Wrap-mode ciphers refuse to initialise without this flag (a guard against using them as
        // a general-purpose cipher by accident).
        EVP_CIPHER_CTX_set_flags(ctx, Int32(EVP_CIPHER_CTX_FLAG_WRAP_ALLOW))
        var out = [UInt8](repeating: 0, count: input.count + 8 + blockSize)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        let ok: Bool = kek.withUnsafeBufferPointer { k in
            // A nil IV selects RFC 3394's default initial value.
            guard EVP_CipherInit_ex2(ctx, algorithm, k.baseAddress, nil, encrypt ? 1 : 0, nil) == 1 else { return false }
            return input.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer { o in
                    guard EVP_CipherUpdate(ctx, o.baseAddress, &written, i.baseAddress, Int32(i.count)) == 1 else { return false }
                    return EVP_CipherFinal_ex(ctx, o.baseAddress.map { $0 + Int(written) }, &finalWritten) == 1
                }
            }
        }
        guard ok else {
            cleanse(&out)
            let detail = drainOpenSSLErrors()
            if encrypt { throw .internal("AES key wrap failed: \(detail)") }
            // The integrity value is the only thing unwrap checks once sizes are right.
            throw .internal("AES key unwrap integrity check failed (wrong key-encryption key or altered bytes)")
        }
        let produced = Int(written + finalWritten)
        let expected = encrypt ? input.count + 8 : input.count - 8
        guard produced == expected else {
            cleanse(&out)
            throw .internal("AES key \(encrypt ? "wrap" : "unwrap") produced \(produced) bytes, expected \(expected)")
        }
        let result = Array(out[..<produced])
        cleanse(&out)
        return result
    }
}

/// The two wrap ciphers, fetched once per process (see ``OpenSSLAlgorithms``).
private struct KeyWrapAlgorithms: @unchecked Sendable {
    // Fetched EVP_CIPHER objects are immutable and safe to share across threads.
    let aes128: OpaquePointer
    let aes256: OpaquePointer

    static let shared: KeyWrapAlgorithms? = {
        guard let a128 = EVP_CIPHER_fetch(nil, "AES-128-WRAP", nil),
            let a256 = EVP_CIPHER_fetch(nil, "AES-256-WRAP", nil)
        else { return nil }
        return KeyWrapAlgorithms(aes128: a128, aes256: a256)
    }()

    static func get() throws(FairPlayError) -> KeyWrapAlgorithms {
        guard let shared else { throw .internal("OpenSSL default provider lacks AES-128-WRAP or AES-256-WRAP") }
        return shared
    }
}
