import Licensing

#if canImport(Glibc)
    import Glibc
#endif

/// The provisioning marker: a key that provisioning writes and only a loss of Redis's data removes
/// (it has no TTL), so a worker can tell "tenant not provisioned" from "Redis forgot everything".
extension RedisLicenseStore {
    /// `SET NX`: keeps the time of the first provisioning (ms since 1970).
    static func markProvisionedCommand() -> RedisCommand {
        RedisCommand(["SET", RedisKeys.provisioned, RedisArgument(Self.currentTimeMilliseconds()), "NX"])
    }

    /// `EXISTS` on the provisioning marker: one round trip, no side effects.
    /// - Throws: `.unavailable` (retriable) when Redis cannot be reached; `.corruptRecord` for a reply
    ///   that is not a number.
    public func isProvisioned() async throws(LicenseStoreError) -> Bool {
        let reply = try Self.checked(try await run([RedisCommand(["EXISTS", RedisKeys.provisioned])])[0])
        guard let count = reply.integerValue else { throw LicenseStoreError(.corruptRecord, "EXISTS answered something other than a number") }
        return count > 0
    }

    /// For stores provisioned before the marker existed: writes it when it is missing and some
    /// tenant record exists (found with `SCAN`, once, at worker start). A store that lost its data
    /// holds no tenant, so it stays unmarked. Returns whether the store is provisioned now.
    package func markProvisionedIfTenantsExist() async throws(LicenseStoreError) -> Bool {
        if try await isProvisioned() { return true }
        // Every master of a cluster: tenant records spread over the slots.
        let found: Bool
        do {
            found = try await client.scanEveryMaster(match: "fps:{t:*}:tenant") { _, _ in true }
        } catch {
            throw Self.storeError(error)
        }
        guard found else { return false }
        _ = try Self.checked(try await run([Self.markProvisionedCommand()])[0])
        return true
    }

    static func currentTimeMilliseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + Int64(now.tv_nsec) / 1_000_000
    }
}
