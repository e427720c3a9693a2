import Licensing

/// Counts a store's errors (by operation and code) into ``WorkerStatistics`` and passes every call
/// through unchanged. Wraps the Redis store under the cache, so only real round trips that failed
/// count; a thrown error costs one lock, a successful call nothing.
package struct MeteredLicenseStore: LicenseStore {
    package let inner: any LicenseStore
    let statistics: WorkerStatistics

    package init(_ inner: any LicenseStore, statistics: WorkerStatistics) {
        self.inner = inner
        self.statistics = statistics
    }

    private func metered<T>(_ operation: String, _ body: () async throws(LicenseStoreError) -> T) async throws(LicenseStoreError) -> T {
        do throws(LicenseStoreError) {
            return try await body()
        } catch {
            statistics.storeError(operation: operation, code: "\(error.code)")
            throw error
        }
    }

    package func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        try await metered("fetch") { () async throws(LicenseStoreError) in try await inner.fetch(requests) }
    }

    package func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        try await metered("lease") { () async throws(LicenseStoreError) in try await inner.acquireLeases(requests) }
    }

    package func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        try await metered("list_slots") { () async throws(LicenseStoreError) in
            try await inner.listSlots(tenant: tenant, account: account, nowMilliseconds: nowMilliseconds)
        }
    }

    package func isProvisioned() async throws(LicenseStoreError) -> Bool {
        try await metered("provisioned") { () async throws(LicenseStoreError) in try await inner.isProvisioned() }
    }

    package func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) {
        try await metered("put") { () async throws(LicenseStoreError) in try await inner.putTenant(tenant) }
    }

    package func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError)
    {
        try await metered("put") { () async throws(LicenseStoreError) in
            try await inner.putContentKey(key, tenant: tenant, assetID: assetID, keyPeriod: keyPeriod)
        }
    }

    package func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        try await metered("put") { () async throws(LicenseStoreError) in try await inner.putPolicy(document, tenant: tenant, assetID: assetID) }
    }
}
