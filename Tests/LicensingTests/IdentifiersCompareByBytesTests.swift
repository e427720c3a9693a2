import Licensing
import Testing
import Wire

/// Identifiers and asset IDs are their bytes: canonically equivalent names with other bytes (NFC and
/// NFD) are two tenants, accounts or assets in every set, cache and check, as they are two keys in
/// Redis; asset IDs that are not UTF-8 are never repaired into one.
@Suite struct IdentifiersCompareByBytesTests {
    /// "café" with U+00E9 (NFC) and with "e" + U+0301 (NFD): one `String` to Swift, two byte strings.
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"
    /// Two asset IDs that are not UTF-8 and that a lossy decode turns into the same "skd://\u{FFFD}".
    static let invalidA: [UInt8] = Array("skd://".utf8) + [0xFF]
    static let invalidB: [UInt8] = Array("skd://".utf8) + [0xFE]

    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }

    @Test func canonicallyEquivalentNamesAreOneStringButTwoIdentifiers() {
        // The hazard itself: Swift's String equality and hashing merge the two spellings.
        #expect(Self.nfc == Self.nfd)
        #expect(Set([Self.nfc, Self.nfd]).count == 1)
        #expect(Array(Self.nfc.utf8) != Array(Self.nfd.utf8))

        let a = Self.id(Self.nfc)
        let b = Self.id(Self.nfd)
        #expect(a != b)
        #expect(a == Self.id(Self.nfc))
        #expect(Set([a, b, Self.id(Self.nfc)]).count == 2)
        // Built by assignment: a literal with keys that compare equal would trap, not fail.
        var table = [a: 1]
        table[b] = 2
        #expect(table.count == 2 && table[a] == 1 && table[b] == 2)
        #expect(AccountKey(tenant: a, account: a) != AccountKey(tenant: a, account: b))
        #expect(Set([AccountKey(tenant: a, account: a), AccountKey(tenant: a, account: b)]).count == 2)
        // Byte order: "cafe" + U+0301 sorts before "caf" + U+00E9 (0x65 < 0xC3), a strict order.
        #expect(b < a && !(a < b))
        #expect([a, b].sorted() == [b, a])
        // The text is kept as given, unnormalized.
        #expect(Array(b.value.utf8) == Array(Self.nfd.utf8))
    }

    @Test func byteKeysKeepEquivalentTextAndInvalidUTF8Apart() {
        #expect(ByteKey(Self.nfc) != ByteKey(Self.nfd))
        #expect(!ByteKey.equal(Self.nfc, Self.nfd) && ByteKey.equal(Self.nfc, "caf\u{E9}"))
        #expect(Set([ByteKey(bytes: Self.invalidA), ByteKey(bytes: Self.invalidB)]).count == 2)
        // The lossy decode the server no longer uses would have made them one.
        #expect(String(decoding: Self.invalidA, as: UTF8.self) == String(decoding: Self.invalidB, as: UTF8.self))
        // Shown apart: text when it is UTF-8 without control characters, else 0x and hex.
        #expect(ByteKey.displayText(Self.invalidA) == "0x736b643a2f2fff")
        #expect(ByteKey.displayText(Self.invalidB) == "0x736b643a2f2ffe")
        #expect(ByteKey.displayText(Array("skd://a".utf8)) == "skd://a")
        #expect(ByteKey.displayText([0x61, 0x0A]) == "0x610a")
    }

    @Test func entitlementCoversOnlyTheAssetWithTheClaimsBytes() {
        let nfcAsset = "skd://\(Self.nfc)/1"
        let nfdAsset = "skd://\(Self.nfd)/1"
        let claims = EntitlementClaims(subject: "alice", asset: nfcAsset, expiresAt: 1)
        #expect(claims.covers(assetID: Array(nfcAsset.utf8)))
        #expect(!claims.covers(assetID: Array(nfdAsset.utf8)))
        #expect(!claims.covers(asset: nfdAsset))
        #expect(!EntitlementClaims(subject: "alice", asset: nfdAsset, expiresAt: 1).covers(asset: nfcAsset))

        // A pattern is a byte prefix.
        let pattern = EntitlementClaims(subject: "alice", assetPattern: "skd://\(Self.nfc)/*", expiresAt: 1)
        #expect(pattern.covers(asset: nfcAsset) && !pattern.covers(asset: nfdAsset))

        // A claim naming U+FFFD does not cover asset IDs that only a lossy decode would turn into it.
        let replacement = EntitlementClaims(subject: "alice", asset: "skd://\u{FFFD}", expiresAt: 1)
        #expect(!replacement.covers(assetID: Self.invalidA) && !replacement.covers(assetID: Self.invalidB))
        let every = EntitlementClaims(subject: "alice", assetPattern: "skd://*", expiresAt: 1)
        #expect(every.covers(assetID: Self.invalidA) && every.covers(assetID: Self.invalidB))
    }

    @Test func entitlementTokenChecksTenantAccountAndAssetByBytes() throws {
        let secret = [UInt8](repeating: 0x5A, count: 32)
        let ring = try EntitlementKeyring(["k1": secret])
        let asset = "skd://\(Self.nfc)/1"
        let token = EntitlementToken.sign(
            EntitlementClaims(subject: Self.nfc, asset: asset, expiresAt: 2_000_000_000, tenant: Self.nfc), keyID: "k1", secret: secret)
        let now: Int64 = 1_700_000_000_000
        func verify(account: String = Self.nfc, assetID: [UInt8] = Array(asset.utf8), tenant: String = Self.nfc) -> EntitlementError? {
            do throws(EntitlementError) {
                _ = try EntitlementToken.verify(
                    token, keyring: ring, expecting: .init(account: account, assetID: assetID, tenant: tenant), nowMilliseconds: now)
                return nil
            } catch {
                return error
            }
        }
        #expect(verify() == nil)
        #expect(verify(tenant: Self.nfd) == .wrongTenant)
        #expect(verify(account: Self.nfd) == .wrongAccount)
        #expect(verify(assetID: Array("skd://\(Self.nfd)/1".utf8)) == .wrongAsset)
        #expect(
            EntitlementToken.Expectation(account: Self.nfc, asset: asset, tenant: Self.nfc)
                != EntitlementToken.Expectation(account: Self.nfd, asset: asset, tenant: Self.nfc))
    }

    @Test func tokenKeyIDsWithEquivalentTextAreTwoKeys() throws {
        let nfcSecret = [UInt8](repeating: 0x11, count: 32)
        let nfdSecret = [UInt8](repeating: 0x22, count: 32)
        let ring = try EntitlementKeyring(keyIDsAndSecrets: [(Self.nfc, nfcSecret), (Self.nfd, nfdSecret)])
        #expect(ring.keyIDs.count == 2)
        let token = EntitlementToken.sign(EntitlementClaims(subject: "alice", asset: "a", expiresAt: 2_000_000_000), keyID: Self.nfd, secret: nfdSecret)
        let verified = try EntitlementToken.verify(
            token, keyring: ring, expecting: .init(account: "alice", asset: "a", tenant: "t"), nowMilliseconds: 1_700_000_000_000)
        #expect(Array(verified.keyID.utf8) == Array(Self.nfd.utf8))
        // Signed with the NFC key's secret but naming the NFD key ID: the NFD secret is used, so it fails.
        let crossed = EntitlementToken.sign(EntitlementClaims(subject: "alice", asset: "a", expiresAt: 2_000_000_000), keyID: Self.nfd, secret: nfcSecret)
        #expect(throws: EntitlementError.badSignature) {
            try EntitlementToken.verify(crossed, keyring: ring, expecting: .init(account: "alice", asset: "a", tenant: "t"), nowMilliseconds: 1_700_000_000_000)
        }
    }

    @Test func offlineRecordsKeepAssetIDsThatAreNotUTF8() throws {
        let record = OfflineLicenseRecord(
            streamID: [UInt8](repeating: 1, count: 16), titleID: nil, assetID: Self.invalidA, deviceID: [9],
            issuedAt: 5, storageSeconds: 10, playbackSeconds: 5)
        let decoded = try #require(OfflineLicenseRecord(json: record.jsonBytes()))
        #expect(decoded.assetID == Self.invalidA)
        var other = record
        other.assetID = Self.invalidB
        #expect(decoded != other)
    }

    @Test func jobGuardsKeepEquivalentJobIDsAndAccountsApart() async throws {
        let guards = InMemoryJobGuardStore()
        let tenant = Self.id("acme")
        let nfc = Self.id(Self.nfc)
        let nfd = Self.id(Self.nfd)
        let stored = StoredAnswer(bytes: Array("reply for nfc".utf8), requestDigest: [1])
        // A reply stored for job ID NFC is not the NFD job's reply.
        #expect(try await guards.storeReplies([StoredReply(tenant: tenant, account: nfc, jobID: nfc, answer: stored, ttlMilliseconds: 60_000)]) == [nil])
        let admitted = try await guards.admit(
            [
                AdmissionRequest(tenant: tenant, account: nfc, jobID: nfc), AdmissionRequest(tenant: tenant, account: nfc, jobID: nfd),
                AdmissionRequest(tenant: tenant, account: nfd, jobID: Self.id("other")),
            ], nowMilliseconds: 1_000, rateWindowMilliseconds: 60_000)
        // The NFC job gets its stored reply; the NFD job ID is new (first job counted on account NFC);
        // account NFD has its own rate counter.
        #expect(admitted.admissions == [.stored(stored), .counted(1), .counted(1)])
        // The NFD job's own reply is stored beside the NFC one, not refused as a reuse of its ID.
        let other = StoredAnswer(bytes: Array("reply for nfd".utf8), requestDigest: [2])
        #expect(try await guards.storeReplies([StoredReply(tenant: tenant, account: nfc, jobID: nfd, answer: other, ttlMilliseconds: 60_000)]) == [nil])
    }

    /// Distinct wrapped keys, so a result shows which read it came from.
    static func key(_ byte: UInt8) -> WrappedContentKey {
        WrappedContentKey(wrappedKey: [UInt8](repeating: byte, count: 24), iv: [UInt8](repeating: byte, count: 16), keyEncryptionKeyID: id("kek"))
    }

    @Test func cachingStoreKeepsEquivalentTenantsAndAssetsApart() async throws {
        let memory = InMemoryLicenseStore()
        let store = CachingLicenseStore(memory, timeToLive: .seconds(60))
        let nfcTenant = Self.id(Self.nfc)
        let nfdTenant = Self.id(Self.nfd)
        let nfcAsset = Array("skd://\(Self.nfc)".utf8)
        let nfdAsset = Array("skd://\(Self.nfd)".utf8)
        for tenant in [nfcTenant, nfdTenant] {
            try await store.putTenant(TenantRecord(id: tenant, certificateHashes: [], keyEncryptionKeyID: Self.id("kek")))
        }
        // Four reads: each tenant with each asset, plus two asset IDs that are not UTF-8.
        let cases: [(StoreIdentifier, [UInt8], UInt8)] = [
            (nfcTenant, nfcAsset, 1), (nfcTenant, nfdAsset, 2), (nfdTenant, nfcAsset, 3), (nfdTenant, nfdAsset, 4),
            (nfcTenant, Self.invalidA, 5), (nfcTenant, Self.invalidB, 6),
        ]
        for (tenant, asset, byte) in cases {
            try await store.putContentKey(Self.key(byte), tenant: tenant, assetID: asset, keyPeriod: nil)
        }
        let requests = cases.map { StoreRequest(tenant: $0.0, account: Self.id("alice"), assetID: $0.1) }
        for pass in 0..<2 {
            // One batch: a key merged by `String` equality would answer two requests with one read.
            let results = try await store.fetch(requests)
            #expect(results.map { $0.contentKey } == cases.map { Self.key($0.2) }, "pass \(pass)")
            #expect(results.map { $0.tenant?.id } == cases.map { $0.0 }, "pass \(pass)")
        }
        let counters = await store.counters
        #expect(counters.misses == cases.count && counters.hits == cases.count)

        // An admin write for the NFC asset drops that entry only.
        try await store.putContentKey(Self.key(7), tenant: nfcTenant, assetID: nfcAsset, keyPeriod: nil)
        let after = try await store.fetch(requests)
        #expect(after.map { $0.contentKey } == [Self.key(7)] + cases.dropFirst().map { Self.key($0.2) })
        #expect(await store.counters.misses == cases.count + 1)
    }

    @Test func inMemoryStoreKeepsEquivalentTenantsAndAccountsApart() async throws {
        let store = InMemoryLicenseStore()
        let nfc = Self.id(Self.nfc)
        let nfd = Self.id(Self.nfd)
        try await store.putTenant(TenantRecord(id: nfc, certificateHashes: [], keyEncryptionKeyID: Self.id("kek"), maxConcurrentStreams: 1))
        try await store.putTenant(TenantRecord(id: nfd, certificateHashes: [], keyEncryptionKeyID: Self.id("kek"), maxConcurrentStreams: 7))
        let results = try await store.fetch([StoreRequest(tenant: nfc, account: nfc, assetID: [1]), StoreRequest(tenant: nfd, account: nfc, assetID: [1])])
        #expect(results.map { $0.tenant?.maxConcurrentStreams } == [1, 7])

        // One stream each: the NFC and NFD accounts each get their own slot in one batch.
        func lease(_ account: StoreIdentifier, session: UInt64) -> LeaseRequest {
            LeaseRequest(
                requestID: Self.id("job-\(session)"), tenant: nfc, account: account, deviceID: [UInt8(session)], sessionID: session,
                maxConcurrentStreams: 1, leaseDurationSeconds: 60, nowMilliseconds: 1_000, slot: .acquireOrRenew)
        }
        let leases = try await store.acquireLeases([lease(nfc, session: 1), lease(nfd, session: 2)])
        #expect(leases == [.granted(expiresAtMilliseconds: 61_000), .granted(expiresAtMilliseconds: 61_000)])
        #expect(try await store.listSlots(tenant: nfc, account: nfc, nowMilliseconds: 1_000).count == 1)
        #expect(try await store.listSlots(tenant: nfc, account: nfd, nowMilliseconds: 1_000).count == 1)
    }
}
