import FairPlay
import Foundation
import KSMService
import Licensing
import ArgumentParser

/// Reads a tenant's key seed file (32 bytes, hex or raw) and wraps it under the tenant's KEK.
///
/// A seed yields every key of the tenant: it is read as every other secret file is
/// (``SecretFile``, the same rule for who may read it), and its buffer is cleansed.
enum KeySeedFile {
    static func read(_ path: String) throws -> [UInt8] {
        var data = try SecretFile.read(path)
        defer { FairPlayCrypto.cleanse(&data) }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if let hex = [UInt8](hexString: text), hex.count == ContentKeyDerivation.seedLength { return hex }
        if data.count == ContentKeyDerivation.seedLength { return data }
        throw ValidationError("key seed file \(path) does not hold \(ContentKeyDerivation.seedLength) bytes (raw or hex)")
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
