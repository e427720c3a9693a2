import Licensing
import Wire

/// Packager credentials: one hash per tenant (``RedisKeys/packagerCredentials(_:)``), field = the
/// credential ID, value = `<token SHA-256, hex>:<created ms>`. The token itself is never stored.
extension RedisLicenseStore: PackagerCredentialStore {
    package func putPackagerCredential(_ credential: PackagerCredential, tenant: StoreIdentifier) async throws(LicenseStoreError) {
        let value = "\(HexEncoding.encode(credential.tokenHash)):\(credential.createdAtMilliseconds)"
        _ = try Self.checked(
            try await run([
                RedisCommand(["HSET", RedisKeys.packagerCredentials(tenant), RedisArgument(credential.id.value), RedisArgument(value)])
            ])[0])
    }

    package func packagerCredentials(tenant: StoreIdentifier) async throws(LicenseStoreError) -> [PackagerCredential] {
        let reply = try await run([RedisCommand(["HGETALL", RedisKeys.packagerCredentials(tenant)])])[0]
        guard let fields = try Self.decodeHash(reply) else { return [] }
        var out: [PackagerCredential] = []
        for (name, value) in fields {
            guard let idText = String(validating: name.bytes, as: UTF8.self), let id = try? StoreIdentifier(idText),
                let text = String(validating: value, as: UTF8.self)
            else {
                throw LicenseStoreError(.corruptRecord, "packager credentials of \(tenant) have a bad field")
            }
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, let hash = HexEncoding.decode(parts[0]), hash.count == 32, let created = Int64(parts[1]) else {
                throw LicenseStoreError(.corruptRecord, "packager credential \(id) of \(tenant) does not decode")
            }
            out.append(PackagerCredential(id: id, tokenHash: hash, createdAtMilliseconds: created))
        }
        return out.sorted { $0.id < $1.id }
    }

    package func removePackagerCredentials(tenant: StoreIdentifier, id: StoreIdentifier?) async throws(LicenseStoreError) -> Int {
        let key = RedisKeys.packagerCredentials(tenant)
        let command: RedisCommand = id.map { RedisCommand(["HDEL", key, RedisArgument($0.value)]) } ?? RedisCommand(["HLEN", key])
        var commands = [command]
        // Removing all: count first, then delete the hash, in one round trip.
        if id == nil { commands.append(RedisCommand(["DEL", key])) }
        let replies = try await run(commands)
        for reply in replies { _ = try Self.checked(reply) }
        guard let removed = replies[0].integerValue else {
            throw LicenseStoreError(.corruptRecord, "packager credentials of \(tenant): count is not an integer")
        }
        return Int(removed)
    }
}
