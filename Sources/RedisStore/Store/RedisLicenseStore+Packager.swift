import Licensing
import Wire

/// A SPEKE key provider's writes: set-if-absent content keys and asset policies, and the per-track
/// period logs its rotation schedules come from. Each method is one pipelined round trip.
extension RedisLicenseStore: PackagerKeyStore {
    /// One ``ContentKeyClaimScriptCall`` per claim, in one pipeline.
    package func claimContentKeys(_ claims: [ContentKeyClaim]) async throws(LicenseStoreError) -> [WrappedContentKey?] {
        if claims.isEmpty { return [] }
        let replies = try await run(claims.map { ContentKeyClaimScriptCall($0).command })
        if let error = LicenseStoreError.answerCount(replies.count, of: claims.count, "claims", from: "claim scripts", code: .corruptRecord) {
            throw error
        }
        var out: [WrappedContentKey?] = []
        out.reserveCapacity(claims.count)
        for (claim, reply) in zip(claims, replies) {
            out.append(try Self.claimedKey(Self.checked(reply), tenant: claim.tenant))
        }
        return out
    }

    /// One ``PeriodLogScriptCall``.
    package func recordPeriod(_ entry: PackagerPeriodEntry, tenant: StoreIdentifier, contentID: [UInt8], trackType: [UInt8]) async throws(LicenseStoreError)
        -> (changed: Bool, log: [PackagerPeriodEntry])
    {
        let call = PeriodLogScriptCall(
            logKey: RedisKeys.periodLog(tenant, contentID: contentID, trackType: trackType), order: entry.order, member: entry.redisMember,
            keep: periodLogLength, ttlMilliseconds: periodLogRetentionMilliseconds)
        let reply = try Self.checked(try await run([call.command])[0])
        guard let parts = reply.arrayValue, parts.count == 2, let changed = parts[0].integerValue, let members = parts[1].arrayValue else {
            throw LicenseStoreError(.corruptRecord, "period log script of \(tenant) returned an unexpected reply")
        }
        var log: [PackagerPeriodEntry] = []
        for member in members {
            guard let bytes = member.bytes, let decoded = PackagerPeriodEntry(redisMember: bytes) else {
                throw LicenseStoreError(.corruptRecord, "period log of \(tenant) has a bad member")
            }
            log.append(decoded)
        }
        return (changed == 1, log.sorted { $0.order < $1.order })
    }

    /// `HMGET`'s three fields: all null is no key; all present is the key; anything else is corrupt.
    static func claimedKey(_ value: RedisValue, tenant: StoreIdentifier) throws(LicenseStoreError) -> WrappedContentKey? {
        guard let fields = value.arrayValue, fields.count == 3 else {
            throw LicenseStoreError(.corruptRecord, "claim script of \(tenant) returned an unexpected reply")
        }
        if fields.allSatisfy(\.isNull) { return nil }
        guard let wrapped = fields[0].bytes, let iv = fields[1].bytes, let kekBytes = fields[2].bytes,
            let kekText = String(validating: kekBytes, as: UTF8.self), let kek = try? StoreIdentifier(kekText)
        else {
            throw LicenseStoreError(.corruptRecord, "content key record of \(tenant) is incomplete")
        }
        return WrappedContentKey(wrappedKey: wrapped, iv: iv, keyEncryptionKeyID: kek)
    }
}
