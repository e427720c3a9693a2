internal import COpenSSL

/// The RSA public key of an Application Certificate, for what a device does: wrap the SPC key.
///
/// `@unchecked Sendable`: the `EVP_PKEY` is read-only after parsing; each encryption builds its own context.
package final class RSAPublicKey: @unchecked Sendable {
    private let pkey: OpaquePointer
    package let bits: Int

    /// Reads the public key from a DER X.509 certificate.
    package init(certificateDER: [UInt8]) throws(FairPlayError) {
        let cert: OpaquePointer? = certificateDER.withUnsafeBufferPointer { buf in
            var cursor: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_X509(nil, &cursor, buf.count)
        }
        guard let cert else { throw FairPlayError(.invalidCertificate, "certificate is not DER X.509: \(drainOpenSSLErrors())") }
        defer { X509_free(cert) }
        guard let key = X509_get_pubkey(cert) else { throw FairPlayError(.invalidCertificate, "certificate has no public key") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw FairPlayError(.invalidCertificate, "certificate key is not RSA")
        }
        self.pkey = key
        self.bits = Int(EVP_PKEY_get_bits(key))
    }

    /// Reads a PEM or DER SubjectPublicKeyInfo ("BEGIN PUBLIC KEY").
    package init(publicKeyPEMOrDER bytes: [UInt8]) throws(FairPlayError) {
        let isPEM = bytes.starts(with: Array("-----BEGIN".utf8))
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buf -> OpaquePointer? in
            if isPEM {
                guard let bio = BIO_new_mem_buf(buf.baseAddress, Int32(buf.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            }
            var cursor: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_PUBKEY(nil, &cursor, buf.count)
        }
        guard let parsed else { throw FairPlayError(.invalidCertificate, "public key does not parse: \(drainOpenSSLErrors())") }
        guard EVP_PKEY_get_base_id(parsed) == EVP_PKEY_RSA else {
            EVP_PKEY_free(parsed)
            throw FairPlayError(.invalidCertificate, "public key is not RSA")
        }
        self.pkey = parsed
        self.bits = Int(EVP_PKEY_get_bits(parsed))
    }

    deinit { EVP_PKEY_free(pkey) }

    package func encryptOAEP(_ plaintext: some Collection<UInt8>, digest: OAEPDigest) throws(FairPlayError) -> [UInt8] {
        let algorithms = try OpenSSLAlgorithms.get()
        let md = digest == .sha1 ? algorithms.sha1 : algorithms.sha256
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { throw .internal("EVP_PKEY_CTX_new failed") }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_encrypt_init(ctx) == 1,
            EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1,
            EVP_PKEY_CTX_set_rsa_oaep_md(ctx, md) == 1,
            EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) == 1
        else { throw .internal("RSA-OAEP encrypt setup failed: \(drainOpenSSLErrors())") }
        let input = Array(plaintext)
        var out = [UInt8](repeating: 0, count: bits / 8)
        var outLength = out.count
        let ok = input.withUnsafeBufferPointer { i in
            out.withUnsafeMutableBufferPointer { o in EVP_PKEY_encrypt(ctx, o.baseAddress, &outLength, i.baseAddress, i.count) }
        }
        guard ok == 1 else { throw .internal("RSA-OAEP encrypt failed: \(drainOpenSSLErrors())") }
        out.removeLast(out.count - outLength)
        return out
    }
}
