import FairPlay
import KSMService
import Licensing

/// The demo tenant's catalogue: live streams with rotating key periods, keys derived from a seed.
///
/// Test data only: `ksm admin seed-demo` writes it into a store (keys wrapped under the demo KEK)
/// and `ksm loadgen` derives the same keys to check every CKC it gets back.
/// Key of (stream, period) = SHA-256(seed | asset ID)[0..16]; IV = SHA-256("iv" | asset ID)[0..16].
package struct DemoCatalog: Sendable {
    package var tenant: String
    package var streams: Int
    package var periods: Int
    package var keySeed: [UInt8]
    package var keyEncryptionKeyID: String
    package var maxConcurrentStreams: Int
    package var leaseDurationSeconds: UInt32
    /// The policy every demo asset gets: HD, HDCP type 0, the lease above.
    package var policy: [UInt8] { Array(#"{"content-type":"hd","hdcp-type":0,"lease-duration":\#(leaseDurationSeconds)}"#.utf8) }

    package init(
        tenant: String = "demo", streams: Int = 4, periods: Int = 4, keySeed: [UInt8] = Array("FairPlayKSM demo".utf8),
        keyEncryptionKeyID: String = "demo-kek", maxConcurrentStreams: Int = 2, leaseDurationSeconds: UInt32 = 300
    ) {
        self.tenant = tenant
        self.streams = streams
        self.periods = periods
        self.keySeed = keySeed
        self.keyEncryptionKeyID = keyEncryptionKeyID
        self.maxConcurrentStreams = maxConcurrentStreams
        self.leaseDurationSeconds = leaseDurationSeconds
    }

    package func assetID(stream: Int, period: Int) -> String { "skd://\(tenant)/stream-\(stream)/period-\(period)" }

    package func contentKey(assetID: String) -> [UInt8] { Array(FairPlayCrypto.sha256(keySeed + Array(assetID.utf8)).prefix(16)) }

    package func contentIV(assetID: String) -> [UInt8] { Array(FairPlayCrypto.sha256(Array("iv".utf8) + Array(assetID.utf8)).prefix(16)) }

    /// The demo key-encryption key: derived from the seed too, so a demo needs no secret files.
    package var demoKeyEncryptionKey: [UInt8] { Array(FairPlayCrypto.sha256(Array("kek".utf8) + keySeed).prefix(16)) }

    /// A keyring that holds the demo key-encryption key under ``keyEncryptionKeyID``.
    package func demoKeyring() throws -> KeyEncryptionKeyring {
        let keyring = KeyEncryptionKeyring()
        var kek = demoKeyEncryptionKey
        try keyring.add(id: try StoreIdentifier(keyEncryptionKeyID), key: &kek)
        return keyring
    }

    /// Writes the catalogue for the test credentials' certificates, its keys wrapped under the demo
    /// key-encryption key; returns the keyring that unwraps them.
    @discardableResult
    package func provision(_ store: any LicenseStore, credentials: TestCredentials) async throws -> KeyEncryptionKeyring {
        let keyring = try demoKeyring()
        try await provision(store, keyring: keyring, certificateHashes: credentials.credentials.map(\.certificateHash))
        return keyring
    }

    /// Writes tenant, policy and every key period into a store.
    package func provision(_ store: any LicenseStore, keyring: KeyEncryptionKeyring, certificateHashes: [[UInt8]]) async throws {
        let tenantID = try StoreIdentifier(tenant)
        let kek = try StoreIdentifier(keyEncryptionKeyID)
        try await store.putTenant(
            TenantRecord(
                id: tenantID, certificateHashes: certificateHashes, keyEncryptionKeyID: kek,
                maxConcurrentStreams: maxConcurrentStreams, leaseDurationSeconds: leaseDurationSeconds))
        try await store.putPolicy(policy, tenant: tenantID, assetID: nil)
        for stream in 0..<streams {
            for period in 0..<periods {
                let asset = assetID(stream: stream, period: period)
                let wrapped = try keyring.wrap(contentKey: contentKey(assetID: asset), iv: contentIV(assetID: asset), with: kek)
                try await store.putContentKey(wrapped, tenant: tenantID, assetID: Array(asset.utf8), keyPeriod: nil)
            }
        }
    }
}
