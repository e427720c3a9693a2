import Licensing
import Wire

/// The job guards over Redis: every call is one pipelined round trip, one small script per job on
/// keys of one hash tag (the account's for replies and rate counters; the SPC's own for claims).
extension RedisLicenseStore: JobGuardStore {
    /// One pipelined round trip: per job, its stored reply or a count in the account's rate window (a
    /// small script on the account's hash tag; a plain `GET` when the job counts toward no rate), and
    /// each tenant's guard settings hash.
    public func admit(_ requests: [AdmissionRequest], nowMilliseconds: Int64, rateWindowMilliseconds: Int64) async throws(LicenseStoreError) -> AdmissionBatch {
        if requests.isEmpty { return AdmissionBatch(admissions: [], settings: [:]) }
        let length = max(1, rateWindowMilliseconds)
        let window = nowMilliseconds / length
        // A first delivery with no rate to count needs no command at all.
        let asked = requests.filter(\.needsStore)
        var commands = asked.map { request in
            // No rate limit to count for: the stored reply alone, without Lua.
            guard request.countsTowardRate else {
                var get = RedisCommandEncoder(capacity: 160)
                get.append("GET")
                get.append(RedisKeys.accountPrefix(request.tenant, account: request.account), RedisKeys.Account.reply, request.jobID.value)
                return RedisCommand(get)
            }
            return AdmissionScriptCall(
                replyKey: RedisKeys.reply(request.tenant, account: request.account, jobID: request.jobID),
                counterKey: RedisKeys.rateCounter(request.tenant, account: request.account, window: window),
                // Twice the window: a counter outlives its window a little, never a live one.
                counterTTLMilliseconds: 2 * length
            ).command
        }
        var tenants: [StoreIdentifier] = []
        for request in requests where !tenants.contains(request.tenant) { tenants.append(request.tenant) }
        commands += tenants.map { RedisCommand(["HGETALL", RedisKeys.guardSettings($0)]) }
        let replies = try await run(commands)
        var admissions: [Admission] = []
        admissions.reserveCapacity(requests.count)
        var answers = replies.prefix(asked.count).makeIterator()
        for request in requests {
            guard request.needsStore else {
                admissions.append(.counted(0))
                continue
            }
            // One reply per asked request, in order (`run` answers every command).
            guard let reply = answers.next() else { throw LicenseStoreError(.backend, "admission answered fewer commands than sent") }
            if !request.countsTowardRate {
                switch try Self.checked(reply) {
                case .null: admissions.append(.counted(0))
                case .bulkString(let bytes): admissions.append(.stored(StoredAnswer(redisValue: bytes)))
                default: throw LicenseStoreError(.corruptRecord, "stored reply of job \(request.jobID) is not a string")
                }
                continue
            }
            guard let pair = try Self.checked(reply).arrayValue, pair.count == 2, let flag = pair[0].integerValue else {
                throw LicenseStoreError(.corruptRecord, "admission script returned an unexpected reply")
            }
            if flag == 1, let bytes = pair[1].bytes {
                admissions.append(.stored(StoredAnswer(redisValue: bytes)))
            } else if let count = pair[1].integerValue, let n = Int(exactly: count) {
                admissions.append(.counted(n))
            } else {
                throw LicenseStoreError(.corruptRecord, "admission script returned an unexpected reply")
            }
        }
        var settings: [StoreIdentifier: GuardSettings] = [:]
        for (tenant, reply) in zip(tenants, replies.dropFirst(asked.count)) {
            settings[tenant] = try Self.decodeGuardSettings(tenant, reply)
        }
        return AdmissionBatch(admissions: admissions, settings: settings)
    }

    /// One pipelined round trip: per SPC, a script that sets its claim key with `NX` and an expiry of the
    /// claim's window, or finds the same job ID already holding it.
    public func claim(_ claims: [SPCClaim]) async throws(LicenseStoreError) -> [Bool] {
        if claims.isEmpty { return [] }
        let replies = try await run(
            claims.map { claim in
                ClaimScriptCall(
                    claimKey: RedisKeys.spcClaim(claim.tenant, transactionID: claim.transactionID, digest: claim.digest),
                    jobID: claim.jobID.value, windowMilliseconds: max(1, claim.windowMilliseconds)
                ).command
            })
        var fresh: [Bool] = []
        for reply in replies {
            guard let flag = try Self.checked(reply).integerValue else {
                throw LicenseStoreError(.corruptRecord, "claim script returned an unexpected reply")
            }
            fresh.append(flag == 1)
        }
        return fresh
    }

    /// One pipelined round trip: per reply, a script on the account's hash tag that keeps the first
    /// answer stored for its job ID and returns the earlier one when there is one.
    public func storeReplies(_ replies: [StoredReply]) async throws(LicenseStoreError) -> [StoredAnswer?] {
        if replies.isEmpty { return [] }
        let values = replies.map(\.answer.redisValue)
        func script(_ position: Int) -> RedisCommand {
            let reply = replies[position]
            return StoreReplyScriptCall(
                replyKey: RedisKeys.reply(reply.tenant, account: reply.account, jobID: reply.jobID),
                reply: values[position], ttlMilliseconds: max(1, reply.ttlMilliseconds)
            ).command
        }
        guard compatibility.usesSetNXGet else { return try Self.earlierReplies(try await run(replies.indices.map(script))) }
        // One plain command per reply (Redis 7.0+): stored unless one exists, the existing one
        // returned; no Lua, and the reply bytes are not copied into and out of a script.
        var answers = try await run(
            zip(replies, values).map { reply, value in
                var set = RedisCommandEncoder(capacity: value.count + 224)
                set.append("SET")
                set.append(RedisKeys.accountPrefix(reply.tenant, account: reply.account), RedisKeys.Account.reply, reply.jobID.value)
                set.append(bytes: value)
                set.append("NX")
                set.append("PX")
                set.append(max(1, reply.ttlMilliseconds))
                set.append("GET")
                return RedisCommand(set)
            })
        // A command refused (nothing stored for it; an older server or a proxy that does not know
        // the option pair, or a failover to one mid-batch) is done again by the script, alone: the
        // answers that did succeed stand, so our own bytes are never taken for another worker's.
        let refused = answers.indices.filter { if case .error = answers[$0] { true } else { false } }
        if !refused.isEmpty {
            if refused.contains(where: { RedisCompatibility.isSyntaxError(answers[$0]) }) { compatibility.refuseSetNXGet() }
            let again = try await run(refused.map(script))
            for (position, answer) in zip(refused, again) { answers[position] = answer }
        }
        return try Self.earlierReplies(answers)
    }

    /// Each stored-reply answer: nil when this call stored it, else the answer stored earlier.
    private static func earlierReplies(_ answers: [RedisValue]) throws(LicenseStoreError) -> [StoredAnswer?] {
        var earlier: [StoredAnswer?] = []
        for answer in answers {
            switch try Self.checked(answer) {
            case .null: earlier.append(nil)
            case .bulkString(let bytes): earlier.append(StoredAnswer(redisValue: bytes))
            default: throw LicenseStoreError(.corruptRecord, "reply script returned an unexpected reply")
            }
        }
        return earlier
    }

    /// Replaces the tenant's guard settings hash in one transaction (`MULTI`, `DEL`, `HSET`, `EXEC`), so
    /// a field left out of `settings` does not survive from the old record.
    public func putGuardSettings(_ settings: GuardSettings, tenant: StoreIdentifier) async throws(LicenseStoreError) {
        let replies = try await run([
            RedisCommand(["MULTI"]), RedisCommand(["DEL", RedisKeys.guardSettings(tenant)]),
            RedisCommand([
                "HSET", RedisKeys.guardSettings(tenant),
                "rate-limit", RedisArgument(settings.rateLimit.map { String($0) } ?? ""),
                "replay-window-ms", RedisArgument(settings.replayWindowMilliseconds),
            ]),
            RedisCommand(["EXEC"]),
        ])
        for reply in replies { _ = try Self.checked(reply) }
    }

    static func decodeGuardSettings(_ tenant: StoreIdentifier, _ value: RedisValue) throws(LicenseStoreError) -> GuardSettings {
        guard let fields = try decodeHash(value) else { return .off }
        func text(_ name: ByteKey) -> String { fields[name].map { String(decoding: $0, as: UTF8.self) } ?? "" }
        var settings = GuardSettings.off
        let rate = text("rate-limit")
        if !rate.isEmpty {
            guard let limit = Int(rate), limit >= 0 else { throw LicenseStoreError(.corruptRecord, "guard settings of \(tenant): bad rate-limit") }
            settings.rateLimit = limit
        }
        let window = text("replay-window-ms")
        if !window.isEmpty {
            guard let ms = Int64(window), ms >= 0 else { throw LicenseStoreError(.corruptRecord, "guard settings of \(tenant): bad replay-window-ms") }
            settings.replayWindowMilliseconds = ms
        }
        return settings
    }
}
