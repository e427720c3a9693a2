internal import COpenSSL

/// The symmetric primitives FairPlay needs, each one OpenSSL EVP call sequence.
///
/// All block operations are unpadded: FairPlay sizes every buffer to whole AES blocks itself, and a
/// length that is not a multiple of 16 is a caller error reported as `parameterError`.
package enum FairPlayCrypto {
    package static let blockSize = 16

    package static func aes128CBCEncrypt(key: some Collection<UInt8>, iv: some Collection<UInt8>, _ input: some Collection<UInt8>) throws(FairPlayError)
        -> [UInt8]
    {
        try cipher(try OpenSSLAlgorithms.get().aes128CBC, encrypt: true, key: Array(key), iv: Array(iv), input: Array(input))
    }

    package static func aes128CBCDecrypt(key: some Collection<UInt8>, iv: some Collection<UInt8>, _ input: some Collection<UInt8>) throws(FairPlayError)
        -> [UInt8]
    {
        try cipher(try OpenSSLAlgorithms.get().aes128CBC, encrypt: false, key: Array(key), iv: Array(iv), input: Array(input))
    }

    package static func aes128ECBEncrypt(key: some Collection<UInt8>, _ input: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        try cipher(try OpenSSLAlgorithms.get().aes128ECB, encrypt: true, key: Array(key), iv: nil, input: Array(input))
    }

    package static func aes128ECBDecrypt(key: some Collection<UInt8>, _ input: some Collection<UInt8>) throws(FairPlayError) -> [UInt8] {
        try cipher(try OpenSSLAlgorithms.get().aes128ECB, encrypt: false, key: Array(key), iv: nil, input: Array(input))
    }

    package static func sha1(_ input: some Collection<UInt8>) -> [UInt8] {
        digest(OpenSSLAlgorithms.shared?.sha1, length: 20, Array(input))
    }

    package static func sha256(_ input: some Collection<UInt8>) -> [UInt8] {
        digest(OpenSSLAlgorithms.shared?.sha256, length: 32, Array(input))
    }

    /// Cryptographically strong random bytes from OpenSSL's per-thread DRBG.
    package static func randomBytes(_ count: Int) -> [UInt8] {
        guard count > 0 else { return [] }
        var out = [UInt8](repeating: 0, count: count)
        let ok = out.withUnsafeMutableBytes { RAND_bytes($0.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32($0.count)) }
        // RAND_bytes fails only when the DRBG cannot be seeded, which leaves no safe way on.
        precondition(ok == 1, "OpenSSL RAND_bytes failed: \(drainOpenSSLErrors())")
        return out
    }

    /// Compares two byte strings in time that does not depend on where they differ.
    package static func constantTimeEqual(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        let x = Array(a)
        let y = Array(b)
        guard x.count == y.count else { return false }
        if x.isEmpty { return true }
        return x.withUnsafeBytes { px in y.withUnsafeBytes { py in CRYPTO_memcmp(px.baseAddress, py.baseAddress, x.count) == 0 } }
    }

    /// Overwrites a buffer that held key material, in a way the optimizer cannot drop.
    package static func cleanse(_ bytes: inout [UInt8]) {
        let count = bytes.count
        bytes.withUnsafeMutableBytes { OPENSSL_cleanse($0.baseAddress, count) }
    }

    private static func digest(_ md: OpaquePointer?, length: Int, _ input: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: length)
        var outLength: UInt32 = 0
        let ok = input.withUnsafeBytes { inBuf in
            out.withUnsafeMutableBytes { outBuf in
                EVP_Digest(inBuf.baseAddress, inBuf.count, outBuf.baseAddress?.assumingMemoryBound(to: UInt8.self), &outLength, md, nil)
            }
        }
        // A digest over memory cannot fail once the algorithm was fetched at start-up.
        precondition(ok == 1 && Int(outLength) == length, "OpenSSL digest failed: \(drainOpenSSLErrors())")
        return out
    }

    private static func cipher(_ algorithm: OpaquePointer, encrypt: Bool, key: [UInt8], iv: [UInt8]?, input: [UInt8]) throws(FairPlayError) -> [UInt8] {
        guard key.count == 16 else { throw .param("AES-128 key must be 16 bytes, got \(key.count)") }
        if let iv, iv.count != 16 { throw .param("AES IV must be 16 bytes, got \(iv.count)") }
        guard input.count % blockSize == 0 else { throw .param("AES input of \(input.count) bytes is not whole blocks") }
        if input.isEmpty { return [] }
        guard let ctx = EVP_CIPHER_CTX_new() else { throw .internal("EVP_CIPHER_CTX_new failed") }
        defer { EVP_CIPHER_CTX_free(ctx) }
        var out = [UInt8](repeating: 0, count: input.count + blockSize)
        var written: Int32 = 0
        var finalWritten: Int32 = 0
        let ok: Bool = key.withUnsafeBufferPointer { k in
            let initOK: Int32
            if let iv {
                initOK = iv.withUnsafeBufferPointer { v in EVP_CipherInit_ex2(ctx, algorithm, k.baseAddress, v.baseAddress, encrypt ? 1 : 0, nil) }
            } else {
                initOK = EVP_CipherInit_ex2(ctx, algorithm, k.baseAddress, nil, encrypt ? 1 : 0, nil)
            }
            guard initOK == 1, EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 else { return false }
            return input.withUnsafeBufferPointer { i in
                out.withUnsafeMutableBufferPointer { o in
                    guard EVP_CipherUpdate(ctx, o.baseAddress, &written, i.baseAddress, Int32(i.count)) == 1 else { return false }
                    return EVP_CipherFinal_ex(ctx, o.baseAddress.map { $0 + Int(written) }, &finalWritten) == 1
                }
            }
        }
        guard ok else { throw .internal("AES operation failed: \(drainOpenSSLErrors())") }
        out.removeLast(out.count - Int(written + finalWritten))
        return out
    }
}
