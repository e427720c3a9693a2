internal import COpenSSL
import Synchronization

/// The OAEP hash pair an SPC version uses: v1 SHA-1 with MGF1-SHA-1, v2 SHA-256 with MGF1-SHA-256.
package enum OAEPDigest: Sendable {
    case sha1
    case sha256
}

/// An RSA private key, parsed once, with a pool of ready decrypt contexts per OAEP digest.
///
/// Parsing a key per request throws away OpenSSL's cached blinding and Montgomery values; this type
/// parses once and reuses `EVP_PKEY_CTX`s (each used by one thread at a time, taken from a locked pool).
/// `@unchecked Sendable`: the `EVP_PKEY` is never mutated after parsing and the pools are behind a Mutex.
package final class RSAPrivateKey: @unchecked Sendable {
    private let pkey: OpaquePointer
    /// Modulus size in bits (1024 for SPC v1 credentials, 2048 for v2).
    package let bits: Int
    private let sha1Contexts = Mutex<[PooledContext]>([])
    private let sha256Contexts = Mutex<[PooledContext]>([])

    /// A decrypt context owned by the pool while parked there, by one caller while in use.
    private struct PooledContext: @unchecked Sendable { let raw: OpaquePointer }

    /// Parses a PEM (PKCS#1 or PKCS#8) or DER private key.
    package init(pemOrDER bytes: [UInt8]) throws(FairPlayError) {
        let isPEM = bytes.starts(with: Array("-----BEGIN".utf8))
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buf -> OpaquePointer? in
            if isPEM {
                guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
            }
            var cursor: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_AutoPrivateKey(nil, &cursor, buf.count)
        }
        guard let parsed else { throw FairPlayError(.invalidCertificate, "private key does not parse: \(drainOpenSSLErrors())") }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA else {
            EVP_PKEY_free(parsed)
            throw FairPlayError(.invalidCertificate, "private key is not RSA")
        }
        self.pkey = parsed
        self.bits = Int(EVP_PKEY_get_bits(parsed))
    }

    deinit {
        for ctx in sha1Contexts.withLock({ $0 }) { EVP_PKEY_CTX_free(ctx.raw) }
        for ctx in sha256Contexts.withLock({ $0 }) { EVP_PKEY_CTX_free(ctx.raw) }
        EVP_PKEY_free(pkey)
    }

    /// RSA-OAEP decryption; throws `invalidCertificate` when the ciphertext does not decrypt under this
    /// key (SDK 26 `decryptKeyRSACustom`: the SPC was made for another certificate or is damaged).
    package func decryptOAEP(_ ciphertext: some Collection<UInt8>, digest: OAEPDigest) throws(FairPlayError) -> [UInt8] {
        let ctx: OpaquePointer
        if let pooled = take(digest) {
            ctx = pooled.raw
        } else {
            ctx = try makeDecryptContext(digest)
        }
        let input = Array(ciphertext)
        var out = [UInt8](repeating: 0, count: bits / 8)
        var outLength = out.count
        let ok = input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in EVP_PKEY_decrypt(ctx, o.baseAddress, &outLength, i.baseAddress, i.count) }
        }
        if ok == 1 {
            give(PooledContext(raw: ctx), digest)
            out.removeLast(out.count - outLength)
            return out
        }
        // A failed decrypt leaves the context usable, but errors are rare: free it rather than reason about it.
        EVP_PKEY_CTX_free(ctx)
        ERR_clear_error()
        throw FairPlayError(.invalidCertificate, "the wrapped SPC key does not decrypt under the certificate's private key (RSA-OAEP)")
    }

    private func take(_ digest: OAEPDigest) -> PooledContext? {
        switch digest {
        case .sha1: sha1Contexts.withLock { $0.popLast() }
        case .sha256: sha256Contexts.withLock { $0.popLast() }
        }
    }

    private func give(_ ctx: PooledContext, _ digest: OAEPDigest) {
        switch digest {
        case .sha1: sha1Contexts.withLock { $0.append(ctx) }
        case .sha256: sha256Contexts.withLock { $0.append(ctx) }
        }
    }

    private func makeDecryptContext(_ digest: OAEPDigest) throws(FairPlayError) -> OpaquePointer {
        let algorithms = try OpenSSLAlgorithms.get()
        let md = digest == .sha1 ? algorithms.sha1 : algorithms.sha256
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .internal("EVP_PKEY_CTX_new failed") }
        guard EVP_PKEY_decrypt_init(ctx) == 1,
            EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1,
            EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) == 1
        else {
            EVP_PKEY_CTX_free(ctx)
            throw .internal("RSA-OAEP context setup failed: \(drainOpenSSLErrors())")
        }
        return ctx
    }
}
