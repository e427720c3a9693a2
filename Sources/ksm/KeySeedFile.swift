import FairPlay
import Foundation
import KSMService
import Licensing
import ArgumentParser

/// Reads a tenant's key seed file (32 bytes, hex or raw) and wraps it under the tenant's KEK.
///
/// A seed yields every key of the tenant: it is read as a key file is (``KeyFile``: the secret-file
/// rule for who may read it, hex or raw, buffers cleansed), only its length differs.
enum KeySeedFile {
    static func read(_ path: String) throws -> [UInt8] {
        try KeyFile.read(path, lengths: [ContentKeyDerivation.seedLength],
                         wrongLength: "key seed file \(path) does not hold \(ContentKeyDerivation.seedLength) bytes (raw or hex)")
    }

    /// The seed at `path`, wrapped (RFC 3394) under the KEK given as `ID=PATH`, whose ID must be `kekID`.
    static func wrap(path: String, kek: String, kekID: StoreIdentifier) throws -> [UInt8] {
        let (id, kekPath) = try ServeOptions.split(kek, "--kek")
        guard id == kekID.value else { throw ValidationError("--kek names \(id), but the tenant's KEK is \(kekID)") }
        let keyring = KeyEncryptionKeyring()
        var key = try KeyFile.read(kekPath)
        try keyring.add(id: kekID, key: &key)
        var seed = try read(path)
        defer { FairPlayCrypto.cleanse(&seed) }
        return try keyring.wrap(secret: seed, with: kekID)
    }
}
