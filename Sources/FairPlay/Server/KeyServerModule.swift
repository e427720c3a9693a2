import Wire

/// The FairPlay key server module: opens SPCs and builds CKCs, following the guide's table 2-1 steps.
///
/// Pure and synchronous; safe to call from many threads at once (private keys keep their own
/// context pools). Parse credentials once and reuse one instance for the process.
public struct KeyServerModule: Sendable {
    /// The Application Certificates and keys this server opens SPCs with.
    public let credentials: CredentialStore
    /// Which protocol versions a device may use; by default any.
    public let versionPolicy: ProtocolVersionPolicy

    /// Creates a key server for a set of credentials.
    /// - Parameters:
    ///   - credentials: The certificates and keys to open SPCs with.
    ///   - versionPolicy: The protocol versions to accept; the default accepts any, as Apple's SDK 26.
    public init(credentials: CredentialStore, versionPolicy: ProtocolVersionPolicy = ProtocolVersionPolicy()) {
        self.credentials = credentials
        self.versionPolicy = versionPolicy
    }

    /// Steps 1-6 of table 2-1: parse, find the certificate, decrypt, check versions, open [SK..R1], check integrity.
    public func open(_ spc: [UInt8]) throws(FairPlayError) -> SPCRequest {
        let container = try SPCContainer.parse(spc[...])
        // SPC version 3 names its certificate by SHA-256, versions 1 and 2 by SHA-1.
        let found =
            container.version == 3
            ? credentials.credential(forCertificateSHA256: container.certificateHash)
            : credentials.credential(forCertificateHash: container.certificateHash)
        guard let credential = found else {
            throw FairPlayError(.invalidCertificate, "SPC is for certificate \(container.certificateHash.hexString), which this server does not hold")
        }
        guard let privateKey = credential.privateKey(forSPCVersion: container.version) else {
            throw FairPlayError(
                .invalidCertificate, "credential \(credential.name) has no \(container.version == 1 ? 1024 : 2048)-bit key for SPC version \(container.version)"
            )
        }
        let plaintext: [UInt8]
        var declaredLength: Int?
        if container.version == 3 {
            plaintext = try container.decryptVersion3Payload(with: privateKey)
        } else {
            var spck = try privateKey.decryptOAEP(container.wrappedKey, digest: container.oaepDigest)
            defer { FairPlayCrypto.cleanse(&spck) }
            // SDK 26 keeps the first 16 bytes of what RSA-OAEP yields; fewer make no AES key.
            guard spck.count >= 16 else { throw .param("the SPC payload key is \(spck.count) bytes, not 16") }
            // SDK 26 decrypts every byte after the header, so all of them must form whole AES blocks.
            guard !container.encryptedPayload.isEmpty, container.encryptedPayload.count % 16 == 0 else {
                throw .param("the \(container.encryptedPayload.count) bytes after the SPC header are not a non-empty multiple of 16")
            }
            plaintext = try FairPlayCrypto.aes128CBCDecrypt(key: spck.prefix(16), iv: container.iv, container.encryptedPayload)
            declaredLength = container.payloadLength
        }
        let tllvs = try TLLVList.parse(plaintext[...], declaredLength: declaredLength)
        // SDK 26 extractReturnTags: a payload without a single TLLV is a parser error.
        guard !tllvs.blocks.isEmpty else { throw .parser("the SPC payload holds no TLLV") }
        let payload = try SPCPayload(tllvs)
        try versionPolicy.check(used: payload.protocolVersionUsed, deviceSupported: payload.protocolVersionsSupported)
        if container.version == 3 { try Self.requireVideoSessionKeyLibrary(credential) }
        let secrets = try openSession(payload, credential: credential)
        return SPCRequest(container: container, payload: payload, secrets: secrets, credential: credential)
    }

    private func openSession(_ payload: SPCPayload, credential: ApplicationCredential) throws(FairPlayError) -> SessionSecrets {
        switch credential.sessionKeySource {
        case .applicationSecretKey(let ask):
            var dask = try DFunction.derivedApplicationSecretKey(r2: payload.r2, ask: ask)
            defer { FairPlayCrypto.cleanse(&dask) }
            return try SessionSecrets.open(payload, dask: dask)
        case .fixedDerivedKey(let dask):
            return try SessionSecrets.open(payload, dask: dask)
        case .cryptoLibrary(let library, let provisioning):
            // The library checks integrity and returns HU and R1 only as a side effect of wrapping a key,
            // so a throwaway key is wrapped here; the CKC call wraps the real one.
            let result = try library.createKeyPayload(
                payload: payload, certificateHash: credential.certificateHash, provisioningData: provisioning,
                contentKey: [UInt8](repeating: 0, count: 16), contentIV: [UInt8](repeating: 0, count: 16), contentType: 0)
            return SessionSecrets(sessionKey: nil, hu: result.hu, r1: result.r1)
        }
    }

    /// Steps 7-10 of table 2-1: encrypt the content key, assemble and encrypt the CKC payload.
    public func makeCKC(for request: SPCRequest, _ content: CKCContent) throws(FairPlayError) -> [UInt8] {
        try CKCBuilder(request: request, content: content).build()
    }
}
