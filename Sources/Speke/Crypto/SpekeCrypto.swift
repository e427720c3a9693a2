internal import COpenSSL

/// The primitives of CPIX content key encryption that FairPlay does not already have: AES-256-CBC
/// with PKCS #7 padding (content key wrapping) and HMAC-SHA512 (encrypted key MAC), CPIX 2.3
/// "Mandatory algorithms". RSA-OAEP, random bytes, constant-time comparison and cleansing are
/// FairPlay's (`RSAPublicKey`, `RSAPrivateKey`, `FairPlayCrypto`).
package enum SpekeCrypto {
    package static let hmacSHA512Length = 64

    /// AES-256-CBC with PKCS #7 padding: a 16-byte content key becomes 32 bytes.
    /// - Throws: `crypto` (500) for a key that is not 32 bytes, an IV that is not 16, or an OpenSSL failure.
    package static func aes256CBCEncrypt(key: [UInt8], iv: [UInt8], _ plaintext: [UInt8]) throws(SpekeError) -> [UInt8] {
        try cipher(encrypt: true, key: key, iv: iv, plaintext)
    }

    /// The inverse of ``aes256CBCEncrypt(key:iv:_:)``; throws when the padding does not check
    /// (wrong key, damaged ciphertext) or the ciphertext is not whole blocks.
    package static func aes256CBCDecrypt(key: [UInt8], iv: [UInt8], _ ciphertext: [UInt8]) throws(SpekeError) -> [UInt8] {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0 else { throw .crypto("AES-256-CBC ciphertext of \(ciphertext.count) bytes is not whole blocks") }
        return try cipher(encrypt: false, key: key, iv: iv, ciphertext)
    }

    /// HMAC-SHA512 of `message` under `key` (64 bytes).
    package static func hmacSHA512(key: [UInt8], _ message: [UInt8]) throws(SpekeError) -> [UInt8] {
        guard let md = SpekeAlgorithms.shared?.sha512 else { throw .crypto("OpenSSL lacks SHA-512") }
        var out = [UInt8](repeating: 0, count: hmacSHA512Length)
        var outLength: UInt32 = 0
        let ok = key.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                out.withUnsafeMutableBufferPointer { o in
                    HMAC(md, k.baseAddress, Int32(k.count), m.baseAddress, m.count, o.baseAddress, &outLength) != nil
                }
            }
        }
        guard ok, Int(outLength) == hmacSHA512Length else { throw .crypto("HMAC-SHA512 failed: \(drainErrors())") }
        return out
    }

    private static func cipher(encrypt: Bool, key: [UInt8], iv: [UInt8], _ input: [UInt8]) throws(SpekeError) -> [UInt8] {
        guard key.count == 32 else { throw .crypto("AES-256 key must be 32 bytes, got \(key.count)") }
        guard iv.count == 16 else { throw .crypto("AES IV must be 16 bytes, got \(iv.count)") }
        guard let algorithm = SpekeAlgorithms.shared?.aes256CBC else { throw .crypto("OpenSSL lacks AES-256-CBC") }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .crypto("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: input.count + 16)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        // Padding stays on (OpenSSL's default): PKCS #7, as CPIX requires.
        let ok: Bool = key.withUnsafeBufferPointer { k in
            iv.withUnsafeBufferPointer { v in
                guard EVP_CipherInit_ex2(ctx, algorithm, k.baseAddress, v.baseAddress, encrypt ? 1 : 0, nil) == 1 else { return false }
                return input.withUnsafeBufferPointer { i in
                    out.withUnsafeMutableBufferPointer { o in
                        guard EVP_CipherUpdate(ctx, o.baseAddress, &written, i.baseAddress, Int32(i.count)) == 1 else { return false }
                        return EVP_CipherFinal_ex(ctx, o.baseAddress.map { $0 + Int(written) }, &finalWritten) == 1
                    }
                }
            }
        }
        guard ok else {
            let detail = drainErrors()
            throw .crypto(encrypt ? "AES-256-CBC encryption failed: \(detail)" : "AES-256-CBC decryption failed (wrong key or padding)")
        }
        out.removeLast(out.count - Int(written + finalWritten))
        return out
    }

    /// OpenSSL's thread-local error queue as one line, emptied.
    private static func drainErrors() -> String {
        var parts: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return parts.isEmpty ? "no OpenSSL error recorded" : parts.joined(separator: "; ")
    }
}

/// AES-256-CBC and SHA-512 fetched from OpenSSL's default provider once per process (as FairPlay's
/// `OpenSSLAlgorithms` does for its own). Fetched objects are immutable and safe to share across
/// threads, hence `@unchecked Sendable`.
private struct SpekeAlgorithms: @unchecked Sendable {
    let aes256CBC: OpaquePointer
    let sha512: OpaquePointer

    static let shared: SpekeAlgorithms? = {
        guard let cbc = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil), let sha512 = EVP_MD_fetch(nil, "SHA512", nil) else { return nil }
        return SpekeAlgorithms(aes256CBC: cbc, sha512: sha512)
    }()
}
