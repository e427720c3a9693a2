import Licensing
import Wire

/// A ``LicenseStore`` over Redis: every batch is one pipelined round trip on one connection (a lease
/// batch takes a second one only for renewals the short renewal script declined).
///
/// The data model is in schemas/redis-data-model.md. Content keys are stored exactly as given:
/// already wrapped by the worker under the tenant's key-encryption key; this type never sees a
/// plaintext key. Retriable ``RedisError``s become retriable ``LicenseStoreError``s (`.unavailable`);
/// a batch that failed that way may be retried as a whole, since lease requests are idempotent per
/// request ID and the reads have no side effects.
public struct RedisLicenseStore: LicenseStore {
    /// One Redis (``RedisClient``) or a Redis Cluster (``RedisClusterClient``): every command the
    /// store sends is routable by its key, and every script and transaction stays in one hash tag.
    package let client: any RedisCommandRunner
    /// What the server turned out not to support, shared by every copy of this store.
    let compatibility = RedisCompatibility()

    /// When set, a lease batch is answered only once this many replicas of each master it wrote to
    /// have its writes (`WAIT`); fewer within the timeout fail the batch as `.unavailable`
    /// (docs/redis.md, "Durability across a failover"). Nil: Redis's asynchronous replication.
    package let durability: RedisDurability?

    /// Creates a store over a client; it connects nothing itself.
    /// - Parameters:
    ///   - client: Where the commands go: a ``RedisClient``, or another ``RedisCommandRunner``.
    ///   - durability: Replicas that must confirm each lease batch's writes (`WAIT`); nil relies on
    ///     Redis's asynchronous replication.
    public init(client: any RedisCommandRunner, durability: RedisDurability? = nil) {
        self.client = client
        self.durability = durability
    }

    // MARK: Reads

    /// One pipelined round trip for the whole batch; requests for the same tenant, key or policy share
    /// one command.
    public func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        if requests.isEmpty { return [] }
        // Deduplicate keys: at a key rotation most of a batch asks for the same tenant and asset.
        var commands: [RedisCommand] = []
        var slotOfCommand: [[RedisArgument]: Int] = [:]
        func slot(_ command: [RedisArgument]) -> Int {
            if let index = slotOfCommand[command] { return index }
            commands.append(RedisCommand(command))
            slotOfCommand[command] = commands.count - 1
            return commands.count - 1
        }
        let plan = requests.map { request in
            (
                tenant: slot(["HGETALL", RedisKeys.tenant(request.tenant)]),
                key: slot(["HGETALL", RedisKeys.contentKey(request.tenant, assetID: request.assetID, keyPeriod: request.keyPeriod)]),
                assetPolicy: slot(["GET", RedisKeys.policy(request.tenant, assetID: request.assetID)]),
                tenantPolicy: slot(["GET", RedisKeys.policy(request.tenant, assetID: nil)]),
                periodPolicy: request.keyPeriod.map { slot(["GET", RedisKeys.policy(request.tenant, assetID: request.assetID, keyPeriod: $0)]) },
                rental: request.accountReads.contains(.rentalStart)
                    ? slot(["HGET", RedisKeys.rentals(request.tenant, account: request.account), RedisArgument(HexEncoding.encode(request.assetID))]) : nil,
                offline: request.accountReads.contains(.offlineRecords)
                    ? slot(["HGETALL", RedisKeys.offline(request.tenant, account: request.account)]) : nil
            )
        }
        let replies = try await run(commands)
        var results: [StoreResult] = []
        results.reserveCapacity(requests.count)
        for (request, slots) in zip(requests, plan) {
            var result = StoreResult(
                tenant: try Self.decodeTenant(request.tenant, replies[slots.tenant]),
                contentKey: try Self.decodeContentKey(replies[slots.key]),
                tenantPolicy: try Self.decodeBytes(replies[slots.tenantPolicy]),
                assetPolicy: try Self.decodeBytes(replies[slots.assetPolicy]),
                keyPeriodPolicy: try slots.periodPolicy.flatMap { index throws(LicenseStoreError) in try Self.decodeBytes(replies[index]) })
            if let index = slots.rental {
                result.rentalStartRead = true
                if let bytes = try Self.decodeBytes(replies[index]) {
                    guard let start = Int64(String(decoding: bytes, as: UTF8.self)) else {
                        throw LicenseStoreError(.corruptRecord, "rental start of \(request.tenant)/\(request.account) is not a number")
                    }
                    result.rentalStartedAt = start
                }
            }
            if let index = slots.offline, let fields = try Self.decodeHash(replies[index]) {
                var records: [OfflineLicenseRecord] = []
                for (_, value) in fields.sorted(by: { $0.key < $1.key }) {
                    guard let record = OfflineLicenseRecord(json: value) else {
                        throw LicenseStoreError(.corruptRecord, "offline record of \(request.tenant)/\(request.account) does not decode")
                    }
                    records.append(record)
                }
                result.offlineRecords = records
            }
            results.append(result)
        }
        return results
    }

    /// `ZRANGEBYSCORE` of the account's slot set from `nowMilliseconds`, less the members the ended
    /// set names, in one round trip.
    public func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        // A stream ended by end-oldest keeps its member until it expires (so its renewal is answered
        // streamEnded) but is no longer live: the ended set is read in the same round trip.
        let replies = try await run([
            RedisCommand(["ZRANGEBYSCORE", RedisKeys.slots(tenant, account: account), RedisArgument("(\(nowMilliseconds)"), "+inf", "WITHSCORES"]),
            RedisCommand(["SMEMBERS", RedisKeys.endedSlots(tenant, account: account)]),
        ])
        guard replies.count == 2, let flat = try Self.checked(replies[0]).arrayValue, flat.count.isMultiple(of: 2),
            let endedMembers = try Self.checked(replies[1]).arrayValue
        else {
            throw LicenseStoreError(.corruptRecord, "slot set of \(tenant)/\(account) is not a score list")
        }
        let ended = Set(endedMembers.compactMap(\.string))
        var slots: [LeaseSlot] = []
        for pair in stride(from: 0, to: flat.count, by: 2) {
            if let member = flat[pair].string, ended.contains(member) { continue }
            guard let member = flat[pair].string, let scoreText = flat[pair + 1].string,
                let score = Double(scoreText), let expiry = Int64(exactly: score.rounded()),
                let slot = LeaseSlot(member: member, expiresAtMilliseconds: expiry)
            else {
                throw LicenseStoreError(.corruptRecord, "bad slot member in \(tenant)/\(account)")
            }
            slots.append(slot)
        }
        return slots
    }

    // MARK: Leases

    /// One script call per request in a pipeline; a session that says it holds a slot, alone for its
    /// account in the batch, tries the short renewal script first, and what that declines runs in a
    /// second round trip. With a durability set, the batch waits for its replicas.
    public func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        if requests.isEmpty { return [] }
        // Each slot's member name once, for the lease scripts and the viewer count.
        let members = requests.map(\.slotMember)
        // A session that says it holds a slot tries the short renewal script first
        // (``RenewalScriptCall``); everything else goes straight to the lease script. Only
        // for an account alone in the batch: what the shortcut declines runs in a second round trip,
        // and within one account that would change the order, and so the answers, of its requests.
        let soleAccount = Self.accountsAloneInBatch(requests)
        let renewals = requests.indices.map { index in
            soleAccount[index] ? RenewalScriptCall(requests[index], member: members[index])?.command : nil
        }
        let commands = renewals.indices.map { renewals[$0] ?? LeaseScriptCall(requests[$0], member: members[$0]).command }
        // Viewer counts for the rotation load ride in the same round trip (RedisLicenseStore+Rotation).
        let replies = try await run(commands + Self.viewerCommands(requests, members: members), durability: durability)
        var results: [LeaseResult?] = []
        results.reserveCapacity(requests.count)
        var declined: [Int] = []
        for (index, reply) in replies.prefix(requests.count).enumerated() {
            let value = try Self.checked(reply)
            if value.isNull, renewals[index] != nil {
                declined.append(index)  // no live renewal: the renewal script wrote nothing
                results.append(nil)
            } else {
                results.append(try Self.leaseResult(value))
            }
        }
        // What the renewal script declined, the lease script decides, in a second round trip. Each of
        // those accounts has no other request in the batch, so no request of it runs out of order.
        if !declined.isEmpty {
            let again = try await run(declined.map { LeaseScriptCall(requests[$0], member: members[$0]).command }, durability: durability)
            if let error = LicenseStoreError.answerCount(again.count, of: declined.count, "requests", from: "lease scripts", code: .corruptRecord) {
                throw error
            }
            for (index, reply) in zip(declined, again) { results[index] = try Self.leaseResult(Self.checked(reply)) }
        }
        return try results.map { result throws(LicenseStoreError) in
            guard let result else { throw LicenseStoreError(.corruptRecord, "lease script returned no reply") }
            return result
        }
    }

    /// For each request: whether it is the only one of its account in the batch.
    static func accountsAloneInBatch(_ requests: [LeaseRequest]) -> [Bool] {
        let accounts = requests.map(\.accountKey)
        var seen: [AccountKey: Int] = [:]
        for account in accounts { seen[account, default: 0] += 1 }
        return accounts.map { seen[$0] == 1 }
    }

    /// A lease script's answer (either script answers `LeaseResult.encoded`).
    private static func leaseResult(_ value: RedisValue) throws(LicenseStoreError) -> LeaseResult {
        guard let text = value.string, let result = LeaseResult(encoded: text) else {
            throw LicenseStoreError(.corruptRecord, "lease script returned an unexpected reply")
        }
        return result
    }

    /// How long device registries, rental starts, offline records and invalidated stream IDs stay
    /// after their last write: 400 days, longer than any rental, offline storage period or device
    /// year a policy can express in practice, and bounded, so idle accounts leave Redis.
    public static let accountRecordRetentionMilliseconds: Int64 = 400 * 86_400_000

    // MARK: Admin writes

    /// Replaces the tenant hash in one transaction (so a removed token secret disappears) and sets the
    /// provisioning marker.
    public func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) {
        let hashes = tenant.certificateHashes.map { HexEncoding.encode($0) }.joined(separator: ",")
        var fields: [RedisArgument] = [
            "HSET", RedisKeys.tenant(tenant.id),
            "kek", RedisArgument(tenant.keyEncryptionKeyID.value),
            "max_streams", RedisArgument(tenant.maxConcurrentStreams),
            "lease_seconds", RedisArgument(tenant.leaseDurationSeconds),
            "cert_hashes", RedisArgument(hashes),
        ]
        if let seed = tenant.keySeed { fields += ["seed", RedisArgument(seed)] }
        for (kid, wrapped) in tenant.entitlementSecrets.sorted(by: { $0.key < $1.key }) {
            fields += [RedisArgument("tok:\(kid.value)"), RedisArgument(wrapped)]
        }
        // Replace, not merge: a removed token key must disappear with the old record. The marker is
        // set outside the transaction: it has a hash tag of its own (one slot in a cluster).
        let replies = try await run([
            RedisCommand(["MULTI"]), RedisCommand(["DEL", RedisKeys.tenant(tenant.id)]), RedisCommand(fields), RedisCommand(["EXEC"]),
            Self.markProvisionedCommand(),
        ])
        for reply in replies { _ = try Self.checked(reply) }
    }

    /// `HSET` of the wrapped key, its IV and its key-encryption key ID under the asset's (and key
    /// period's) key.
    public func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError)
    {
        _ = try Self.checked(
            try await run([
                RedisCommand([
                    "HSET", RedisKeys.contentKey(tenant, assetID: assetID, keyPeriod: keyPeriod),
                    "wrapped", RedisArgument(key.wrappedKey),
                    "iv", RedisArgument(key.iv),
                    "kek", RedisArgument(key.keyEncryptionKeyID.value),
                ])
            ])[0])
    }

    /// `SET` of the document's bytes as given: this store does not parse them (`ksm admin put-policy`
    /// checks a document before it writes it).
    public func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        _ = try Self.checked(
            try await run([RedisCommand(["SET", RedisKeys.policy(tenant, assetID: assetID), RedisArgument(document)])])[0])
    }

    // MARK: Helpers

    func run(_ commands: [RedisCommand], durability: RedisDurability? = nil) async throws(LicenseStoreError) -> [RedisValue] {
        do {
            return try await client.pipeline(commands, durability: durability)
        } catch {
            throw Self.storeError(error)
        }
    }

    /// Retriable (connection lost, timeout, reconnecting, LOADING, a cluster that did not settle)
    /// -> `.unavailable`; anything else (bad password, bad configuration) will not heal by retrying.
    static func storeError(_ error: RedisError) -> LicenseStoreError {
        LicenseStoreError(error.isRetriable ? .unavailable : .backend, error.description, isRetriable: error.isRetriable)
    }

    /// Turns an error reply into a thrown error (the whole batch fails: see ``LicenseStore``).
    static func checked(_ value: RedisValue) throws(LicenseStoreError) -> RedisValue {
        if case .error(let message) = value {
            let error = RedisError.serverReply(message)
            throw LicenseStoreError(error.isRetriable ? .unavailable : .backend, message, isRetriable: error.isRetriable)
        }
        return value
    }

    private static func decodeBytes(_ value: RedisValue) throws(LicenseStoreError) -> [UInt8]? {
        switch try checked(value) {
        case .null: return nil
        case .bulkString(let bytes): return bytes
        default: throw LicenseStoreError(.corruptRecord, "expected a string value")
        }
    }

    /// A hash's fields by their names' exact bytes (``ByteKey``): names canonically equivalent but
    /// byte-different (two token key IDs) stay two fields.
    static func decodeHash(_ value: RedisValue) throws(LicenseStoreError) -> [ByteKey: [UInt8]]? {
        guard let flat = try checked(value).arrayValue, flat.count.isMultiple(of: 2) else {
            throw LicenseStoreError(.corruptRecord, "expected a hash")
        }
        if flat.isEmpty { return nil }  // HGETALL of a missing key
        var fields: [ByteKey: [UInt8]] = [:]
        for pair in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[pair].bytes, let bytes = flat[pair + 1].bytes else {
                throw LicenseStoreError(.corruptRecord, "bad hash field")
            }
            fields[ByteKey(bytes: name)] = bytes
        }
        return fields
    }

    private static func decodeTenant(_ id: StoreIdentifier, _ value: RedisValue) throws(LicenseStoreError) -> TenantRecord? {
        guard let fields = try decodeHash(value) else { return nil }
        // Text fields that are not UTF-8 are corrupt, never repaired into another identifier.
        func text(_ name: ByteKey) -> String? { fields[name].flatMap { String(validating: $0, as: UTF8.self) } }
        guard let kekText = text("kek"), let kek = try? StoreIdentifier(kekText),
            let maxText = text("max_streams"), let maxStreams = Int(maxText), maxStreams >= 0,
            let leaseText = text("lease_seconds"), let lease = UInt32(leaseText)
        else {
            throw LicenseStoreError(.corruptRecord, "tenant record \(id) is incomplete")
        }
        var hashes: [[UInt8]] = []
        for part in (text("cert_hashes") ?? "").split(separator: ",") {
            guard let hash = HexEncoding.decode(part) else {
                throw LicenseStoreError(.corruptRecord, "tenant record \(id) has a bad certificate hash")
            }
            hashes.append(hash)
        }
        var secrets: [StoreIdentifier: [UInt8]] = [:]
        let tokenPrefix = Array("tok:".utf8)
        for (name, value) in fields where name.bytes.starts(with: tokenPrefix) {
            guard let kidText = String(validating: name.bytes.dropFirst(tokenPrefix.count), as: UTF8.self), let kid = try? StoreIdentifier(kidText) else {
                throw LicenseStoreError(.corruptRecord, "tenant record \(id) has a bad token key ID")
            }
            secrets[kid] = value
        }
        return TenantRecord(
            id: id, certificateHashes: hashes, keyEncryptionKeyID: kek, maxConcurrentStreams: maxStreams, leaseDurationSeconds: lease,
            entitlementSecrets: secrets,
            keySeed: fields["seed"])
    }

    private static func decodeContentKey(_ value: RedisValue) throws(LicenseStoreError) -> WrappedContentKey? {
        guard let fields = try decodeHash(value) else { return nil }
        guard let wrapped = fields["wrapped"], let iv = fields["iv"], let kekBytes = fields["kek"],
            let kekText = String(validating: kekBytes, as: UTF8.self), let kek = try? StoreIdentifier(kekText)
        else {
            throw LicenseStoreError(.corruptRecord, "content key record is incomplete")
        }
        return WrappedContentKey(wrappedKey: wrapped, iv: iv, keyEncryptionKeyID: kek)
    }
}
