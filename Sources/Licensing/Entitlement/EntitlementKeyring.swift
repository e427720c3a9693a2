/// One tenant's token secrets by key ID, so secrets rotate: the platform signs with a new `kid`
/// while tokens signed with the old one stay valid until the old entry is removed.
///
/// `description` lists key IDs only, never a secret.
public struct EntitlementKeyring: Sendable, CustomStringConvertible {
    /// The shortest secret accepted: 32 bytes, the HMAC-SHA256 output size (RFC 7518 section 3.2).
    public static let minimumSecretLength = 32

    private var secrets: [String: [UInt8]]

    /// Why a keyring cannot be built.
    public struct InvalidKey: Error, Hashable, Sendable, CustomStringConvertible {
        public var keyID: String
        public var description: String { "entitlement secret \(keyID) is empty, or shorter than \(EntitlementKeyring.minimumSecretLength) bytes" }
    }

    /// - Throws: ``InvalidKey`` for a secret under 32 bytes or an empty key ID.
    public init(_ secrets: [String: [UInt8]]) throws(InvalidKey) {
        for (kid, secret) in secrets where kid.isEmpty || secret.count < Self.minimumSecretLength {
            throw InvalidKey(keyID: kid)
        }
        self.secrets = secrets
    }

    /// The secret for a key ID; nil when unknown.
    func secret(for keyID: String) -> [UInt8]? { secrets[keyID] }

    /// The key IDs held, sorted.
    public var keyIDs: [String] { secrets.keys.sorted() }

    public var description: String { "EntitlementKeyring(\(keyIDs.joined(separator: ", ")))" }
}
