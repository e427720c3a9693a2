import FairPlay
import KSMService
import Licensing
import Speke

/// Stores the keys of a CPIX document (``CPIXKeyDocument``) for a tenant, so its workers serve
/// them: each key wrapped under the tenant's key-encryption key, under its asset ID, exactly where
/// ``PackagerKeyIssuer`` stores a key it issues.
///
/// The asset ID is the `skd://` URI the document's FairPlay signaling names, which the player will
/// put in the SPC; without one it is the URI SPEKE issuing would give the key
/// (``PackagerAssetID``: content ID, period index, KID). The IV is `ContentKey@explicitIV`, the IV
/// the packager encrypted with; a document without one needs ``Options/defaultIV``.
///
/// Set-if-absent, checked before anything is written: every asset is read first, and if one
/// already holds a different key (or IV) the import stops naming every such asset and writes
/// nothing, unless ``Options/replace``. Keys equal to the stored ones, or, for a tenant with a key
/// seed, to the ones the seed derives where nothing is stored, are left as they are, so importing
/// a file twice, or an export of the same tenant, changes nothing. New keys are then claimed in one
/// batch (stored only where the asset still has none, and read back: a key another writer stored
/// in between is reported as a conflict). The track type's content type becomes the asset's policy
/// unless it has one, and keys of a key period are recorded in the period log, writing rotation
/// schedules as SPEKE issuing does
/// (``PackagerKeyIssuer/recordPeriod(_:assetID:tenant:contentID:trackType:)``).
package struct CPIXKeyImporter: Sendable {
    /// Reads stored keys and writes keys, policies, period logs and schedules.
    package var issuer: PackagerKeyIssuer

    package init(issuer: PackagerKeyIssuer) {
        self.issuer = issuer
    }

    /// What the operator chose.
    package struct Options: Sendable {
        /// The tenant the keys are stored for.
        package var tenant: StoreIdentifier
        /// Overwrite an asset's key when it differs. Default: false (a difference is a conflict).
        package var replace: Bool
        /// The IV of keys without `explicitIV`, 16 bytes; nil refuses such keys.
        package var defaultIV: [UInt8]?

        package init(tenant: StoreIdentifier, replace: Bool = false, defaultIV: [UInt8]? = nil) {
            self.tenant = tenant
            self.replace = replace
            self.defaultIV = defaultIV
        }
    }

    /// One key of the document, placed: where it goes and what goes with it.
    package struct Placement: Sendable {
        /// The `skd://` URI, whose bytes are the asset ID.
        package var uri: String
        /// `ContentKey@kid`.
        package var keyID: KID
        /// The IV stored with the key: `explicitIV`, else ``Options/defaultIV``.
        package var iv: [UInt8]
        /// The key's period, for the period log; nil without one.
        package var keyPeriod: PackagerKeyPeriod?
        /// The rule's track type: its content type becomes the asset's policy.
        package var trackType: IntendedTrackType?
        /// The content ID of the period log (the document's); nil without a key period.
        package var contentID: String?
        /// The asset ID the SPC will carry: the URI's bytes.
        package var assetID: [UInt8] { Array(uri.utf8) }
    }

    /// What happened to one key.
    package enum Action: String, Sendable, Hashable {
        /// The asset had no key; this one is stored.
        case stored
        /// The asset held this very key and IV already (stored, or derived from the tenant's key seed).
        case unchanged
        /// The asset held another key, overwritten (``Options/replace``).
        case replaced
    }

    /// The result of an import; no key bytes.
    package struct Outcome: Sendable {
        /// Per key, in document order.
        package var keys: [(placement: Placement, action: Action)] = []
        /// Rotation schedules written from key periods, each counted once (recording both periods
        /// of a pair writes their schedule twice).
        package var schedulesWritten = 0
        /// Why recording the key periods failed, when it did (the keys are stored all the same;
        /// importing again records them).
        package var periodFailure: String?
    }

    /// Where each key of `document` goes, in document order; pure.
    /// - Throws: `.invalidDocument` for a key without an IV (and no default), a key that has no
    ///   FairPlay URI and no content ID to name it by, a period or track type SPEKE would refuse,
    ///   two keys for one asset.
    package static func placements(_ document: CPIXKeyDocument, options: Options) throws(CPIXFileError) -> [Placement] {
        var placements: [Placement] = []
        var assets: Set<String> = []
        for key in document.keys {
            guard let iv = key.explicitIV ?? options.defaultIV else {
                throw CPIXKeyDocument.invalid(
                    "ContentKey \(key.keyID) has no explicitIV, and the CKC must carry the IV the packager encrypted with: give it with --default-iv HEX")
            }
            var keyPeriod: PackagerKeyPeriod? = nil
            if let period = key.period {
                do throws(SpekeError) {
                    keyPeriod = try SpekeKeyRequests.keyPeriod(period)
                } catch {
                    throw CPIXKeyDocument.invalid(error.message)
                }
            }
            var trackType: IntendedTrackType? = nil
            if let text = key.trackType {
                do throws(PackagerKeyIssuerError) {
                    trackType = try IntendedTrackType(text)
                } catch {
                    throw CPIXKeyDocument.invalid("KID \(key.keyID): \(error.message)")
                }
            }
            let uri: String
            if let signaled = key.skdURI {
                uri = signaled
            } else {
                guard let contentID = document.contentID else {
                    throw CPIXKeyDocument.invalid("ContentKey \(key.keyID) has no FairPlay skd:// URI and the document no contentId to name it by")
                }
                do throws(PackagerKeyIssuerError) {
                    // The request's checks on the content ID and KID, and its URI.
                    uri = try PackagerKeyRequest(
                        tenant: options.tenant, contentID: contentID, keyPeriod: keyPeriod, keyID: key.keyID.bytes, trackType: trackType
                    ).uri
                } catch {
                    throw CPIXKeyDocument.invalid("KID \(key.keyID): \(error.message)")
                }
            }
            guard assets.insert(uri).inserted else { throw CPIXKeyDocument.invalid("two keys of the document go to one asset, \(uri)") }
            if keyPeriod != nil, document.contentID == nil {
                throw CPIXKeyDocument.invalid("KID \(key.keyID) has a key period, but the document has no contentId to record the period under")
            }
            placements.append(
                Placement(
                    uri: uri, keyID: key.keyID, iv: iv, keyPeriod: keyPeriod, trackType: trackType,
                    contentID: keyPeriod == nil ? nil : document.contentID))
        }
        return placements
    }

    /// Checks every asset, then stores the keys of `document` as the type's comment says. Once the
    /// checks pass, a store failure during the writes (the overwrites of ``Options/replace``, then
    /// one batch of claims) can leave part of the file written; importing it again completes it.
    /// - Throws: `.conflict` naming every asset whose stored key differs (nothing written),
    ///   `.unknownTenant`, `.keyring` (the tenant's KEK not given, a stored key that does not
    ///   unwrap), `.store`, and ``placements(_:options:)``'s errors.
    package func run(_ document: CPIXKeyDocument, options: Options) async throws(CPIXFileError) -> Outcome {
        let placements = try Self.placements(document, options: options)
        let store = issuer.store
        let keyring = issuer.keyring
        let results: [StoreResult]
        do {
            results = try await store.fetch(
                placements.map { StoreRequest(tenant: options.tenant, account: PackagerKeyIssuer.readAccount, assetID: $0.assetID) })
        } catch {
            throw CPIXFileError(.store, "stored keys cannot be read: \(error.message)")
        }
        guard results.count == placements.count else { throw CPIXFileError(.store, "the store answered \(results.count) of \(placements.count) reads") }
        guard let tenant = results.first?.tenant else {
            throw CPIXFileError(.unknownTenant, "tenant \(options.tenant) is not known; provision it with ksm admin put-tenant")
        }
        guard keyring.ids.contains(tenant.keyEncryptionKeyID) else {
            throw CPIXFileError(
                .keyring,
                "tenant \(options.tenant)'s key-encryption key \(tenant.keyEncryptionKeyID) was not given: pass --kek \(tenant.keyEncryptionKeyID)=PATH")
        }

        // Check everything before writing anything.
        var actions: [Action] = []
        var conflicts: [String] = []
        for ((placement, result), key) in zip(zip(placements, results), document.keys) {
            guard let stored = result.contentKey else {
                // With a key seed the worker serves the derived key: the same key needs no record.
                let derived = try tenant.keySeed.map { seed throws(CPIXFileError) in
                    try derivedKeyMatches(key.contentKey, placement, seed: seed, tenant: tenant)
                }
                actions.append(derived == true ? .unchanged : .stored)
                continue
            }
            var current: [UInt8]
            do {
                current = try keyring.unwrap(stored)
            } catch {
                throw CPIXFileError(.keyring, "the key stored for \(placement.uri) does not unwrap: \(error.reason)")
            }
            let same = FairPlayCrypto.constantTimeEqual(current, key.contentKey) && stored.iv == placement.iv
            FairPlayCrypto.cleanse(&current)
            if same {
                actions.append(.unchanged)
            } else {
                actions.append(.replaced)
                conflicts.append(placement.uri)
            }
        }
        if !conflicts.isEmpty, !options.replace {
            let listed = conflicts.prefix(20).joined(separator: ", ") + (conflicts.count > 20 ? " and \(conflicts.count - 20) more" : "")
            throw CPIXFileError(
                .conflict,
                "\(conflicts.count) asset(s) already hold a different key: \(listed). Nothing was written; import with --replace to overwrite them (players holding the old key fail)"
            )
        }

        var wrapped: [WrappedContentKey] = []
        for (placement, key) in zip(placements, document.keys) {
            do {
                wrapped.append(try keyring.wrap(contentKey: key.contentKey, iv: placement.iv, with: tenant.keyEncryptionKeyID))
            } catch {
                throw CPIXFileError(.keyring, "a key cannot be wrapped under \(tenant.keyEncryptionKeyID): \(error.reason)")
            }
        }
        let winners: [WrappedContentKey?]
        do throws(LicenseStoreError) {
            for index in placements.indices where actions[index] == .replaced {
                try await store.putContentKey(wrapped[index], tenant: options.tenant, assetID: placements[index].assetID, keyPeriod: nil)
            }
            let claims = placements.indices.map { index in
                ContentKeyClaim(
                    tenant: options.tenant, assetID: placements[index].assetID, candidate: actions[index] == .stored ? wrapped[index] : nil,
                    policy: placements[index].trackType?.contentType.map { PolicyDocument(contentType: $0).jsonBytes() })
            }
            winners = try await store.claimContentKeys(claims)
        } catch {
            throw CPIXFileError(.store, "keys cannot be written: \(error.message)")
        }
        guard winners.count == placements.count else {
            throw CPIXFileError(.store, "the store answered \(winners.count) of \(placements.count) key claims")
        }
        // Another writer may have stored a key between the check and the claim.
        let raced = placements.indices.filter { actions[$0] != .unchanged && winners[$0] != wrapped[$0] }.map { placements[$0].uri }
        if !raced.isEmpty {
            throw CPIXFileError(
                .conflict, "another writer stored a different key during the import, for \(raced.joined(separator: ", ")); the other keys are stored")
        }

        var outcome = Outcome()
        outcome.keys = Array(zip(placements, actions))
        var scheduled: Set<[UInt8]> = []
        for placement in placements {
            guard let period = placement.keyPeriod, let contentID = placement.contentID else { continue }
            do throws(LicenseStoreError) {
                let plan = try await issuer.recordPeriod(
                    period, assetID: placement.assetID, tenant: options.tenant, contentID: contentID, trackType: placement.trackType)
                scheduled.formUnion(plan.put.map(\.assetID))
            } catch {
                outcome.periodFailure = error.message
                break
            }
        }
        outcome.schedulesWritten = scheduled.count
        return outcome
    }

    /// Whether the tenant's key seed derives exactly `key` and the placement's IV for its asset.
    private func derivedKeyMatches(_ key: [UInt8], _ placement: Placement, seed: [UInt8], tenant: TenantRecord) throws(CPIXFileError) -> Bool {
        var derived: ContentKeyDerivation.DerivedKey
        do {
            derived = try issuer.keyring.deriveContentKey(seed: seed, with: tenant.keyEncryptionKeyID, assetID: placement.assetID)
        } catch {
            throw CPIXFileError(.keyring, "the key seed of tenant \(tenant.id) cannot derive the key of \(placement.uri): \(error.reason)")
        }
        defer { FairPlayCrypto.cleanse(&derived.key) }
        return FairPlayCrypto.constantTimeEqual(derived.key, key) && derived.iv == placement.iv
    }
}
