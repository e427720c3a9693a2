import FairPlay
import Licensing
import Logging

/// Issues the content keys a SPEKE key provider answers with, so that workers serve exactly them:
/// for (tenant, content ID, key period, KID, track type) one key and IV, forever, the same from
/// every provider instance (docs/key-seeds.md, "Keys for packagers (SPEKE)").
///
/// The asset ID is the key's `skd://` URI (``PackagerAssetID``), and the key is found by it exactly
/// as a worker finds it, with no key period in the job: a key stored under the asset ID wins;
/// otherwise the tenant's key seed derives it from the asset ID (``ContentKeyDerivation``).
/// - With a seed, nothing is stored for the key: every instance derives the same bytes.
/// - Without one, a random key and IV are wrapped under the tenant's KEK and stored only if the
///   asset has no key yet (``PackagerKeyStore/claimContentKeys(_:)``); the stored key is read back
///   in the same step, so instances that race agree on the first one written.
/// - An `explicitIV` in the request is kept: with a seed whose IV differs, the derived key is
///   stored with that IV (set-if-absent, so the first IV asked for wins and later answers carry it).
/// - The track type's content type is stored as the asset's policy (`{"content-type": ...}`), only
///   if the asset has no policy, so the worker applies Apple's rules for it.
///
/// Keys of a key period are then recorded in the stream's period log, and the rotation schedules
/// that follow from it written (``PackagerRotationPlan``): a failure there is logged, never fails
/// the keys, and the next request for the period writes them again.
package struct PackagerKeyIssuer: Sendable {
    /// Tenants, stored keys, policies, period logs and rotation schedules.
    package var store: any PackagerKeyStore
    /// The tenants' key-encryption keys (the same ones the workers hold).
    package var keyring: KeyEncryptionKeyring
    /// Trace and debug only, never key bytes.
    package var logger: Logger
    /// The wall clock in ms since 1970 (rotation boundaries are compared with it).
    package var clock: @Sendable () -> Int64

    package init(
        store: any PackagerKeyStore, keyring: KeyEncryptionKeyring, logger: Logger,
        clock: @escaping @Sendable () -> Int64 = { LicenseProcessor.currentTimeMilliseconds() }
    ) {
        self.store = store
        self.keyring = keyring
        self.logger = logger
        self.clock = clock
    }

    /// The account named in the provider's store reads; per-account records are never read.
    package static let readAccount: StoreIdentifier = {
        // A valid literal: no reserved character, within the length limit.
        guard let id = try? StoreIdentifier("packager-key-issuer") else { preconditionFailure("invalid literal identifier") }
        return id
    }()

    /// Issues every key of one packager request, in request order: one read for the batch, at
    /// most one write round trip, then the period logs.
    /// - Throws: unknown tenant, a KEK this provider does not hold, a store failure. Nothing is
    ///   returned in part: on a throw every key already computed is cleansed.
    package func issue(_ requests: [PackagerKeyRequest]) async throws(PackagerKeyIssuerError) -> [IssuedPackagerKey] {
        if requests.isEmpty { return [] }
        let results: [StoreResult]
        do {
            results = try await store.fetch(requests.map { StoreRequest(tenant: $0.tenant, account: Self.readAccount, assetID: $0.assetID) })
        } catch {
            throw PackagerKeyIssuerError(store: error)
        }
        guard results.count == requests.count else {
            throw PackagerKeyIssuerError(.store, "store answered \(results.count) of \(requests.count) key reads")
        }
        var keys: [IssuedPackagerKey] = []
        keys.reserveCapacity(requests.count)
        var claims: [(index: Int, claim: ContentKeyClaim)] = []
        do throws(PackagerKeyIssuerError) {
            for (index, (request, result)) in zip(requests, results).enumerated() {
                let (key, claim) = try decide(request, result)
                keys.append(key)
                if let claim { claims.append((index, claim)) }
            }
            if !claims.isEmpty {
                let winners: [WrappedContentKey?]
                do {
                    winners = try await store.claimContentKeys(claims.map { $0.claim })
                } catch {
                    throw PackagerKeyIssuerError(store: error)
                }
                guard winners.count == claims.count else {
                    throw PackagerKeyIssuerError(.store, "store answered \(winners.count) of \(claims.count) key claims")
                }
                for ((index, _), winner) in zip(claims, winners) {
                    try settle(&keys[index], winner: winner)
                }
            }
        } catch {
            for index in keys.indices { keys[index].cleanse() }
            throw error
        }
        await recordPeriods(keys)
        return keys
    }

    /// The key as the read found it, and the claim to send when something must be written first.
    /// The key returned for a claim is provisional (``settle(_:winner:)`` replaces it).
    private func decide(_ request: PackagerKeyRequest, _ result: StoreResult) throws(PackagerKeyIssuerError) -> (IssuedPackagerKey, ContentKeyClaim?) {
        guard let tenant = result.tenant else {
            throw PackagerKeyIssuerError(.unknownTenant, "tenant \(request.tenant) is not known")
        }
        let contentType = request.trackType?.contentType
        // An asset policy already stored (by an operator, or the first provider) is kept as it is.
        let policy = result.assetPolicy == nil ? contentType.map { PolicyDocument(contentType: $0).jsonBytes() } : nil
        var key = IssuedPackagerKey(request: request, contentKey: [], iv: [], uri: request.uri, contentType: contentType, origin: .stored)
        func claim(_ candidate: WrappedContentKey?) -> ContentKeyClaim {
            ContentKeyClaim(tenant: request.tenant, assetID: request.assetID, candidate: candidate, policy: policy)
        }
        // A stored key wins over the seed, as on the worker.
        if let stored = result.contentKey {
            key.contentKey = try unwrap(stored)
            key.iv = stored.iv
            return (key, policy == nil ? nil : claim(nil))
        }
        if let seed = tenant.keySeed {
            var derived: ContentKeyDerivation.DerivedKey
            do {
                derived = try keyring.deriveContentKey(seed: seed, with: tenant.keyEncryptionKeyID, assetID: request.assetID)
            } catch {
                throw PackagerKeyIssuerError(.keyring, error.reason)
            }
            (key.contentKey, key.iv, key.origin) = (derived.key, derived.iv, .derivedFromSeed)
            FairPlayCrypto.cleanse(&derived.key)
            guard let explicitIV = request.explicitIV, explicitIV != key.iv else {
                return (key, policy == nil ? nil : claim(nil))
            }
            // The packager's IV differs from the derived one: the worker must find this IV, so the
            // derived key is stored with it.
            let candidate = try wrap(key.contentKey, iv: explicitIV, tenant: tenant)
            return (key, claim(candidate))
        }
        var random = FairPlayCrypto.randomBytes(16)
        defer { FairPlayCrypto.cleanse(&random) }
        let candidate = try wrap(random, iv: request.explicitIV ?? FairPlayCrypto.randomBytes(16), tenant: tenant)
        return (key, claim(candidate))
    }

    /// Replaces a provisional key with the stored winner; with none stored the seed's key stands.
    private func settle(_ key: inout IssuedPackagerKey, winner: WrappedContentKey?) throws(PackagerKeyIssuerError) {
        guard let winner else {
            guard key.origin == .derivedFromSeed else {
                throw PackagerKeyIssuerError(.store, "no key is stored for \(key.uri) after the claim")
            }
            return
        }
        let unwrapped = try unwrap(winner)
        key.cleanse()
        (key.contentKey, key.iv, key.origin) = (unwrapped, winner.iv, .stored)
    }

    private func unwrap(_ wrapped: WrappedContentKey) throws(PackagerKeyIssuerError) -> [UInt8] {
        guard wrapped.iv.count == 16 else { throw PackagerKeyIssuerError(.keyring, "stored content IV is \(wrapped.iv.count) bytes, not 16") }
        do {
            return try keyring.unwrap(wrapped)
        } catch {
            throw PackagerKeyIssuerError(.keyring, error.reason)
        }
    }

    private func wrap(_ contentKey: [UInt8], iv: [UInt8], tenant: TenantRecord) throws(PackagerKeyIssuerError) -> WrappedContentKey {
        do {
            return try keyring.wrap(contentKey: contentKey, iv: iv, with: tenant.keyEncryptionKeyID)
        } catch {
            throw PackagerKeyIssuerError(.keyring, error.reason)
        }
    }

    // MARK: Rotation

    /// Records each key of a key period in its track's period log and writes the schedules that
    /// follow. Failures are logged: the keys stand, and the next request for the period retries.
    private func recordPeriods(_ keys: [IssuedPackagerKey]) async {
        for key in keys {
            guard let period = key.request.keyPeriod else { continue }
            let request = key.request
            do throws(LicenseStoreError) {
                let plan = try await recordPeriod(
                    period, assetID: key.assetID, tenant: request.tenant, contentID: request.contentID, trackType: request.trackType)
                if !plan.put.isEmpty {
                    logger.debug(
                        "rotation schedule written from key periods",
                        metadata: [LoggingKeys.tenant: "\(request.tenant)", "ksm.schedules": "\(plan.put.count)", "ksm.removed": "\(plan.remove.count)"])
                }
            } catch {
                logger.warning(
                    "key period not recorded; rotation schedule not written",
                    metadata: [LoggingKeys.tenant: "\(request.tenant)", LoggingKeys.reason: "\(error.message)", LoggingKeys.retriable: "\(error.isRetriable)"])
            }
        }
    }

    /// Records the key of `period` stored or derived under `assetID` in the period log of
    /// (tenant, content ID, track type) and writes the rotation schedules that follow from the log
    /// (``PackagerRotationPlan``). Issuing does this for every key of a key period; an import of
    /// keys made by another provider does it too, so both write the same schedules.
    /// - Returns: the plan that was written.
    /// - Throws: the store's error; schedules written before it stay, and recording the same
    ///   period again writes the rest.
    package func recordPeriod(
        _ period: PackagerKeyPeriod, assetID: [UInt8], tenant: StoreIdentifier, contentID: String, trackType: IntendedTrackType?
    ) async throws(LicenseStoreError) -> PackagerRotationPlan {
        let entry = PackagerPeriodEntry(
            order: period.order, startMilliseconds: period.startMilliseconds, endMilliseconds: period.endMilliseconds, assetID: assetID)
        let (changed, log) = try await store.recordPeriod(
            entry, tenant: tenant, contentID: Array(contentID.utf8), trackType: Array((trackType?.value ?? "").utf8))
        let plan = PackagerRotationPlan.after(recording: entry, log: log, changed: changed, tenant: tenant, nowMilliseconds: clock())
        for schedule in plan.put { try await store.putRotation(schedule) }
        for asset in plan.remove { try await store.removeRotation(tenant: tenant, assetID: asset) }
        return plan
    }
}
