import FairPlay
import Licensing

extension KeyEncryptionKeyring {
    /// Derives the content key and IV of (asset, period) from a tenant's wrapped key seed
    /// (``ContentKeyDerivation``, docs/key-seeds.md). The unwrapped seed lives only for this call
    /// and is cleansed before return; the caller should cleanse the returned key after use.
    /// - Throws: unknown KEK, a seed that does not unwrap or is not 32 bytes, a bad asset ID.
    package func deriveContentKey(seed wrapped: [UInt8], with id: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier? = nil) throws(KeyringError)
        -> ContentKeyDerivation.DerivedKey
    {
        var seed = try unwrap(secret: wrapped, with: id)
        defer { FairPlayCrypto.cleanse(&seed) }
        do {
            return try ContentKeyDerivation.derive(seed: seed, assetID: assetID, keyPeriod: keyPeriod?.value)
        } catch {
            throw KeyringError(error.description)
        }
    }
}
