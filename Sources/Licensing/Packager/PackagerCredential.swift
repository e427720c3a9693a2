/// One packager credential of a tenant as the store keeps it: a name and the SHA-256 of the
/// bearer token, never the token (docs/redis.md, "Packager credentials").
package struct PackagerCredential: Sendable, Hashable {
    /// Names the credential (`ksm admin remove-packager-credential --id`); the user name of its
    /// HTTP Basic form.
    package var id: StoreIdentifier
    /// SHA-256 of the token's text (32 bytes).
    package var tokenHash: [UInt8]
    /// When it was created, ms since 1970.
    package var createdAtMilliseconds: Int64

    package init(id: StoreIdentifier, tokenHash: [UInt8], createdAtMilliseconds: Int64) {
        self.id = id
        self.tokenHash = tokenHash
        self.createdAtMilliseconds = createdAtMilliseconds
    }
}
