/// Where packager credentials live: per tenant, by credential ID, hashes only.
package protocol PackagerCredentialStore: Sendable {
    /// Adds a credential, or replaces the one with the same ID (admin).
    func putPackagerCredential(_ credential: PackagerCredential, tenant: StoreIdentifier) async throws(LicenseStoreError)

    /// The tenant's credentials, by ID order; empty when it has none.
    func packagerCredentials(tenant: StoreIdentifier) async throws(LicenseStoreError) -> [PackagerCredential]

    /// Removes one credential, or every credential of the tenant when `id` is nil (admin); returns
    /// how many were removed.
    func removePackagerCredentials(tenant: StoreIdentifier, id: StoreIdentifier?) async throws(LicenseStoreError) -> Int
}
