import FairPlay
import Licensing

/// A key issued to a packager: exactly the key and IV workers put in the CKC for its asset ID.
///
/// Holds key material: the caller writes it into its answer and then cleanses ``contentKey``
/// (``cleanse()``). `description` shows no key.
package struct IssuedPackagerKey: Sendable, Equatable, CustomStringConvertible {
    /// Where the key comes from on the worker too.
    package enum Origin: Sendable, Hashable {
        /// Derived from the tenant's key seed and the asset ID; nothing stored for the key.
        case derivedFromSeed
        /// Stored under the asset ID (generated here, or stored first by an operator or another provider).
        case stored
    }

    /// The request it answers.
    package var request: PackagerKeyRequest
    /// The 16-byte content key.
    package var contentKey: [UInt8]
    /// The 16-byte IV (`explicitIV` in the answer).
    package var iv: [UInt8]
    /// The `skd://` URI for the playlist.
    package var uri: String
    /// The content type the worker applies, when the track type names one.
    package var contentType: ContentType?
    /// Seed or store.
    package var origin: Origin

    /// The asset ID the SPC will carry.
    package var assetID: [UInt8] { Array(uri.utf8) }

    /// Overwrites the key bytes.
    package mutating func cleanse() { FairPlayCrypto.cleanse(&contentKey) }

    package var description: String {
        "\(uri) (\(origin == .stored ? "stored" : "derived from the key seed")\(contentType.map { ", \($0.rawValue)" } ?? ""))"
    }
}
