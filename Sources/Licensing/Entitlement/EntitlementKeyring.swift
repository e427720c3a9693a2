import FairPlay
import Wire

/// One tenant's token secrets by key ID, so secrets rotate: the platform signs with a new `kid`
/// while tokens signed with the old one stay valid until the old entry is removed.
///
/// Key IDs are told apart by their bytes (``ByteKey``), as the store keys them: a `kid` canonically
/// equivalent to a held one, with other bytes, is unknown. `description` lists key IDs only, never
/// a secret.
///
/// A class so the unwrapped secrets have one owner that wipes them when the keyring goes (a batch
/// unwraps them per tenant and drops them at its end); `@unchecked Sendable` holds because
/// ``secrets`` is written only in `init` and `deinit`, when no other reference exists.
package final class EntitlementKeyring: @unchecked Sendable, CustomStringConvertible {
    /// The shortest secret accepted: 32 bytes, the HMAC-SHA256 output size (RFC 7518 section 3.2).
    package static let minimumSecretLength = 32

    private var secrets: [ByteKey: [UInt8]]
    /// The key IDs as given, in byte order.
    package let keyIDs: [String]

    /// Why a keyring cannot be built.
    package struct InvalidKey: Error, Hashable, Sendable, CustomStringConvertible {
        package var keyID: String
        package var description: String { "entitlement secret \(keyID) is empty, or shorter than \(EntitlementKeyring.minimumSecretLength) bytes" }
    }

    /// - Throws: ``InvalidKey`` for a secret under 32 bytes or an empty key ID.
    package convenience init(_ secrets: [String: [UInt8]]) throws(InvalidKey) {
        try self.init(keyIDsAndSecrets: secrets.map { ($0.key, $0.value) })
    }

    /// Key IDs with their secrets; key IDs that differ only in their bytes stay two entries (a
    /// `[String: _]` dictionary would already have merged them). A key ID given twice keeps its last
    /// secret; the earlier one is wiped. The secrets' buffers are taken as they are, so the wipe in
    /// `deinit` reaches them when the caller keeps no copy.
    /// - Throws: ``InvalidKey`` for a secret under 32 bytes or an empty key ID.
    package init(keyIDsAndSecrets pairs: some Sequence<(String, [UInt8])>) throws(InvalidKey) {
        var secrets: [ByteKey: [UInt8]] = [:]
        var ids: [ByteKey: String] = [:]
        for (kid, secret) in pairs {
            guard !kid.isEmpty, secret.count >= Self.minimumSecretLength else { throw InvalidKey(keyID: kid) }
            if var replaced = secrets.updateValue(secret, forKey: ByteKey(kid)) { FairPlayCrypto.cleanse(&replaced) }
            ids[ByteKey(kid)] = kid
        }
        self.secrets = secrets
        self.keyIDs = ids.sorted { $0.key < $1.key }.map(\.value)
    }

    deinit {
        for key in Array(secrets.keys) {
            secrets[key]?.withUnsafeMutableBytes { FairPlayCrypto.cleanse($0) }
        }
    }

    /// The secret for a key ID (its exact bytes); nil when unknown.
    func secret(for keyID: String) -> [UInt8]? { secrets[ByteKey(keyID)] }

    package var description: String { "EntitlementKeyring(\(keyIDs.joined(separator: ", ")))" }
}
