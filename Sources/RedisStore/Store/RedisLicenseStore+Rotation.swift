import Licensing
import Wire

/// Rotation schedules and viewer counts in Redis. Each method is one or two pipelined round trips
/// and runs in the background (admin, or a worker's prefetch task), never per job.
extension RedisLicenseStore: RotationScheduleStore {
    package func putRotation(_ schedule: RotationSchedule) async throws(LicenseStoreError) {
        let key = RedisKeys.rotation(schedule.tenant, assetID: schedule.assetID)
        var hset: [RedisArgument] = ["HSET", key]
        for (name, value) in schedule.fields { hset += [RedisArgument(name), RedisArgument(value)] }
        // Replace, not merge: a period left out must not survive from the previous schedule. The
        // index lives outside the tenant's hash tag (another cluster slot), so it is written after
        // the transaction, not in it: a reader that sees the new boundary finds the new schedule,
        // and an index entry whose schedule is missing is skipped.
        let replies = try await rotationRun([
            RedisCommand(["MULTI"]), RedisCommand(["DEL", key]), RedisCommand(hset), RedisCommand(["EXEC"]),
            RedisCommand([
                "ZADD", RedisKeys.rotationIndex, RedisArgument(schedule.boundaryMilliseconds),
                RedisArgument(RedisKeys.rotationMember(schedule.tenant, assetID: schedule.assetID)),
            ]),
        ])
        for reply in replies { _ = try Self.rotationChecked(reply) }
    }

    package func removeRotation(tenant: StoreIdentifier, assetID: [UInt8]) async throws(LicenseStoreError) {
        let replies = try await rotationRun([
            RedisCommand(["DEL", RedisKeys.rotation(tenant, assetID: assetID)]),
            RedisCommand(["ZREM", RedisKeys.rotationIndex, RedisArgument(RedisKeys.rotationMember(tenant, assetID: assetID))]),
        ])
        for reply in replies { _ = try Self.rotationChecked(reply) }
    }

    package func rotations(tenant: StoreIdentifier?) async throws(LicenseStoreError) -> [RotationSchedule] {
        let all = try await schedules(["ZRANGE", RedisKeys.rotationIndex, "0", "-1"])
        guard let tenant else { return all }
        return all.filter { $0.tenant == tenant }
    }

    package func dueRotations(from: Int64, through: Int64) async throws(LicenseStoreError) -> [RotationSchedule] {
        try await schedules(["ZRANGEBYSCORE", RedisKeys.rotationIndex, RedisArgument(from), RedisArgument(through)])
    }

    package func viewerCounts(_ schedules: [RotationSchedule], nowMilliseconds: Int64) async throws(LicenseStoreError) -> [Int] {
        if schedules.isEmpty { return [] }
        var commands: [RedisCommand] = []
        for schedule in schedules {
            let key = RedisKeys.viewers(schedule.tenant, assetID: schedule.assetID)
            // Expired viewers leave first, so the set stays the size of the live audience.
            commands.append(RedisCommand(["ZREMRANGEBYSCORE", key, "-inf", RedisArgument(nowMilliseconds)]))
            commands.append(RedisCommand(["ZCOUNT", key, RedisArgument("(\(nowMilliseconds)"), "+inf"]))
        }
        let replies = try await rotationRun(commands)
        var counts: [Int] = []
        for index in stride(from: 1, to: replies.count, by: 2) {
            guard let count = try Self.rotationChecked(replies[index]).integerValue else {
                throw LicenseStoreError(.corruptRecord, "viewer count is not an integer")
            }
            counts.append(Int(count))
        }
        return counts
    }

    /// The pipeline commands that record each lease's viewer beside the lease script: one `ZADD`
    /// and one `PEXPIRE` per request that takes or renews a slot and names the asset it plays.
    /// Same round trip as the leases; a refused request is recorded too, so the count is an upper
    /// estimate by the refused sessions until their entry expires.
    /// `members`: each request's ``LeaseRequest/slotMember``, in order.
    static func viewerCommands(_ requests: [LeaseRequest], members: [String]) -> [RedisCommand] {
        // One ZADD (every viewer of the asset in this batch) and one PEXPIRE per asset, not two
        // commands per viewer: in a storm most of a batch watches the same few streams.
        var slotOfKey: [RedisArgument: Int] = [:]
        var adds: [RedisCommandEncoder] = []
        var keys: [RedisArgument] = []
        var ttls: [Int64] = []
        for (request, member) in zip(requests, members) where request.slot == .acquireOrRenew {
            guard let assetID = request.viewedAssetID else { continue }
            let key = RedisKeys.viewers(request.tenant, assetID: assetID)
            // The set outlives its latest lease by a minute, then vanishes with an idle stream.
            let ttl = Int64(request.leaseDurationSeconds) * 1000 + 60_000
            let slot: Int
            if let known = slotOfKey[key] {
                slot = known
            } else {
                slot = adds.count
                slotOfKey[key] = slot
                var add = RedisCommandEncoder(capacity: 1024)
                add.append("ZADD")
                add.append(key)
                adds.append(add)
                keys.append(key)
                ttls.append(ttl)
            }
            // Members written in place into the asset's one ZADD.
            adds[slot].append(request.expiresAtMilliseconds)
            adds[slot].append("\(request.account.value)/\(member)")
            ttls[slot] = max(ttls[slot], ttl)
        }
        var commands: [RedisCommand] = []
        for slot in adds.indices {
            commands.append(RedisCommand(adds[slot]))
            commands.append(RedisCommand(["PEXPIRE", keys[slot], RedisArgument(ttls[slot])]))
        }
        return commands
    }

    // MARK: Helpers

    /// Reads index members from `command`, then every schedule hash in one pipeline.
    private func schedules(_ command: [RedisArgument]) async throws(LicenseStoreError) -> [RotationSchedule] {
        guard let members = try Self.rotationChecked(try await rotationRun([RedisCommand(command)])[0]).arrayValue else {
            throw LicenseStoreError(.corruptRecord, "rotation index is not a list")
        }
        var owners: [(StoreIdentifier, [UInt8])] = []
        for member in members {
            // Validated, not repaired: a tenant that is not UTF-8 is a bad member, not another tenant.
            guard let bytes = member.bytes, let text = String(validating: bytes, as: UTF8.self), let colon = text.firstIndex(of: ":"),
                let tenant = try? StoreIdentifier(String(text[..<colon])),
                let asset = HexEncoding.decode(text[text.index(after: colon)...])
            else {
                throw LicenseStoreError(.corruptRecord, "rotation index has a bad member")
            }
            owners.append((tenant, asset))
        }
        if owners.isEmpty { return [] }
        let replies = try await rotationRun(owners.map { RedisCommand(["HGETALL", RedisKeys.rotation($0.0, assetID: $0.1)]) })
        var out: [RotationSchedule] = []
        for ((tenant, asset), reply) in zip(owners, replies) {
            guard let flat = try Self.rotationChecked(reply).arrayValue, flat.count.isMultiple(of: 2) else {
                throw LicenseStoreError(.corruptRecord, "rotation schedule is not a hash")
            }
            // An index entry whose hash is gone (removed by hand) is skipped, not an error.
            if flat.isEmpty { continue }
            var fields: [String: String] = [:]
            for pair in stride(from: 0, to: flat.count, by: 2) {
                // Periods are identifiers: a value that is not UTF-8 is a bad field, never repaired.
                guard let name = flat[pair].string, let value = flat[pair + 1].bytes.flatMap({ String(validating: $0, as: UTF8.self) }) else {
                    throw LicenseStoreError(.corruptRecord, "rotation schedule has a bad field")
                }
                fields[name] = value
            }
            out.append(try RotationSchedule(tenant: tenant, assetID: asset, fields: fields))
        }
        return out.sorted { $0.boundaryMilliseconds < $1.boundaryMilliseconds }
    }

    /// One pipeline; errors mapped as ``fetch(_:)`` maps them (retriable -> `.unavailable`).
    private func rotationRun(_ commands: [RedisCommand]) async throws(LicenseStoreError) -> [RedisValue] {
        do {
            return try await client.pipeline(commands)
        } catch {
            throw LicenseStoreError(error.isRetriable ? .unavailable : .backend, error.description, isRetriable: error.isRetriable)
        }
    }

    private static func rotationChecked(_ value: RedisValue) throws(LicenseStoreError) -> RedisValue {
        if case .error(let message) = value {
            let error = RedisError.serverReply(message)
            throw LicenseStoreError(error.isRetriable ? .unavailable : .backend, message, isRetriable: error.isRetriable)
        }
        return value
    }
}
