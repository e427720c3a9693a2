import FairPlay
import Licensing
import Wire

/// A packager's bearer token: `ksmpk_` and the unpadded base64url of 32 random bytes (49
/// characters), and the SHA-256 of that text, which is all the store keeps.
///
/// A plain SHA-256 is enough here, where a password would need a slow hash (bcrypt, scrypt,
/// Argon2): a slow hash makes guessing a low-entropy password from its hash expensive, but this
/// token is 256 random bits, so there is nothing to guess; recovering it from its hash is a
/// SHA-256 preimage. The fast hash also keeps verifying every packager request cheap.
package enum PackagerToken {
    /// What every token starts with, so secret scanners and people recognise one.
    package static let prefix = "ksmpk_"
    /// Random bytes in a token.
    package static let randomLength = 32

    /// A new token from OpenSSL's DRBG.
    package static func generate() -> String {
        var random = FairPlayCrypto.randomBytes(randomLength)
        defer { FairPlayCrypto.cleanse(&random) }
        return prefix + Base64URL.encode(random)
    }

    /// The SHA-256 of the token's UTF-8 text, as stored and compared.
    package static func hash(_ token: some Collection<UInt8>) -> [UInt8] {
        FairPlayCrypto.sha256(token)
    }

    /// A new credential ID, `pk-` and 12 random hex digits, when the operator names none.
    package static func generateID() -> StoreIdentifier {
        // Three ASCII letters, a dash and hex digits: always a valid identifier.
        guard let id = try? StoreIdentifier("pk-" + HexEncoding.encode(FairPlayCrypto.randomBytes(6))) else {
            preconditionFailure("generated credential ID is invalid")
        }
        return id
    }
}
