import FairPlay
import FairPlayDevice
import Foundation
import KSMService
import Licensing
import Logging
import Wire

/// Test credentials (copied in shape from Tests/FairPlayTests/Fixtures.swift): set A in
/// Fixtures/test-credentials, set B in Fixtures/test-credentials-b (see their READMEs).
enum Fixtures {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func project(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: packageRoot.appendingPathComponent(path))) }

    struct CredentialSet {
        let directory: String
        let prefix: String

        var ask: [UInt8] {
            get throws {
                let text = String(decoding: try Fixtures.project("\(directory)/\(prefix)ask.hex"), as: UTF8.self)
                return [UInt8](hexString: text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? []
            }
        }

        func credential(name: String) throws -> ApplicationCredential {
            try ApplicationCredential(
                name: name,
                certificateDER: try Fixtures.project("\(directory)/\(prefix)certificate.der"),
                privateKey1024: try RSAPrivateKey(pemOrDER: try Fixtures.project("\(directory)/\(prefix)private_key_1024.pem")),
                privateKey2048: try RSAPrivateKey(pemOrDER: try Fixtures.project("\(directory)/\(prefix)private_key_2048.pem")),
                sessionKeySource: .applicationSecretKey(try ask))
        }

        func trust() throws -> DeviceTrust {
            try DeviceTrust(
                certificateDER: try Fixtures.project("\(directory)/\(prefix)certificate.der"),
                publicKey2048: try RSAPublicKey(publicKeyPEMOrDER: try Fixtures.project("\(directory)/\(prefix)public_key_2048.pem")),
                ask: try ask)
        }
    }

    static let setA = CredentialSet(directory: "Fixtures/test-credentials", prefix: "test_")
    static let setB = CredentialSet(directory: "Fixtures/test-credentials-b", prefix: "test_b_")
}

func id(_ text: String) -> StoreIdentifier {
    // Test literals are valid by construction.
    try! StoreIdentifier(text)
}

/// A realistic epoch in milliseconds.
let t0: Int64 = 1_700_000_000_000

/// A test logger that drops everything (swift-log's default handler would print to stdout).
let quietLogger = Logger(label: "ksm.tests") { _ in SwiftLogNoOpLogHandler() }

/// Two tenants, each with its own certificate, key-encryption key, assets and policies:
///
/// - `acme` owns certificate A, KEK `kek-a` (16 bytes), max 2 streams, lease 600 s. Tenant policy hd;
///   asset overrides uhd and audio (audio with a 120 s lease).
/// - `globex` owns certificate B, KEK `kek-b` (32 bytes). Tenant policy sd.
/// - `initech` exists but has no policy; `hooli` has a key wrapped under a KEK no worker holds.
struct World: Sendable {
    let credentialA: ApplicationCredential
    let credentialB: ApplicationCredential
    let deviceA: SimulatedDevice
    let deviceB: SimulatedDevice
    let trustA: DeviceTrust
    let keyring: KeyEncryptionKeyring
    /// Plaintext content keys and IVs by asset ID, to check what a CKC carries.
    let keys: [String: (key: [UInt8], iv: [UInt8])]

    static let hdAsset = "skd://acme/hd-1"
    static let uhdAsset = "skd://acme/uhd-1"
    static let audioAsset = "skd://acme/audio-1"
    static let sdAsset = "skd://globex/sd-1"
    static let noPolicyAsset = "skd://initech/a"
    static let foreignKEKAsset = "skd://hooli/a"
    static let badPolicyAsset = "skd://acme/bad-policy"
    /// HD with a 600 s lease set by the asset's document (stream limit: the tenant record's 2).
    static let liveAsset = "skd://acme/live-1"
    /// HD with a 120 s lease.
    static let shortLiveAsset = "skd://acme/live-short"
    /// The tenant's token secret for key ID "k1" (tests sign with it).
    static let tokenSecret = [UInt8](repeating: 0x5A, count: 32)

    init() throws {
        credentialA = try Fixtures.setA.credential(name: "test-a")
        credentialB = try Fixtures.setB.credential(name: "test-b")
        trustA = try Fixtures.setA.trust()
        deviceA = SimulatedDevice(trust: trustA)
        deviceB = SimulatedDevice(trust: try Fixtures.setB.trust())
        keyring = try KeyEncryptionKeyring([
            id("kek-a"): [UInt8](repeating: 0xA1, count: 16),
            id("kek-b"): [UInt8](repeating: 0xB2, count: 32),
        ])
        var keys: [String: (key: [UInt8], iv: [UInt8])] = [:]
        for asset in [
            Self.hdAsset, Self.uhdAsset, Self.audioAsset, Self.sdAsset, Self.noPolicyAsset, Self.foreignKEKAsset, Self.badPolicyAsset, Self.liveAsset,
            Self.shortLiveAsset,
        ] {
            keys[asset] = (FairPlayCrypto.randomBytes(16), FairPlayCrypto.randomBytes(16))
        }
        self.keys = keys
    }

    /// A key server holding both certificates (or only A).
    func keyServer(onlyA: Bool = false) throws -> KeyServerModule {
        KeyServerModule(credentials: try CredentialStore(onlyA ? [credentialA] : [credentialA, credentialB]))
    }

    func processor(store: any LicenseStore, pool: CryptoPool, onlyA: Bool = false) throws -> LicenseProcessor {
        LicenseProcessor(keyServer: try keyServer(onlyA: onlyA), store: store, keyring: keyring, pool: pool, logger: quietLogger)
    }

    /// Puts tenants, wrapped keys and policies into `store`.
    func seed(_ store: any LicenseStore) async throws {
        try await store.putTenant(
            TenantRecord(
                id: id("acme"), certificateHashes: [credentialA.certificateHash], keyEncryptionKeyID: id("kek-a"), maxConcurrentStreams: 2,
                leaseDurationSeconds: 600,
                entitlementSecrets: [id("k1"): try keyring.wrap(secret: Self.tokenSecret, with: id("kek-a"))]))
        try await store.putTenant(TenantRecord(id: id("globex"), certificateHashes: [credentialB.certificateHash], keyEncryptionKeyID: id("kek-b")))
        try await store.putTenant(TenantRecord(id: id("initech"), certificateHashes: [credentialA.certificateHash], keyEncryptionKeyID: id("kek-a")))
        try await store.putTenant(TenantRecord(id: id("hooli"), certificateHashes: [credentialA.certificateHash], keyEncryptionKeyID: id("kek-a")))

        func put(_ asset: String, tenant: String, kek: String) async throws {
            let plain = keys[asset]!
            let wrapped = try keyring.wrap(contentKey: plain.key, iv: plain.iv, with: id(kek))
            try await store.putContentKey(wrapped, tenant: id(tenant), assetID: Array(asset.utf8), keyPeriod: nil)
        }
        try await put(Self.hdAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.uhdAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.audioAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.badPolicyAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.liveAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.shortLiveAsset, tenant: "acme", kek: "kek-a")
        try await put(Self.sdAsset, tenant: "globex", kek: "kek-b")
        try await put(Self.noPolicyAsset, tenant: "initech", kek: "kek-a")
        // Wrapped under a KEK this worker's keyring does not hold.
        let other = try KeyEncryptionKeyring([id("kek-elsewhere"): FairPlayCrypto.randomBytes(16)])
        let plain = keys[Self.foreignKEKAsset]!
        try await store.putContentKey(
            try other.wrap(contentKey: plain.key, iv: plain.iv, with: id("kek-elsewhere")), tenant: id("hooli"), assetID: Array(Self.foreignKEKAsset.utf8),
            keyPeriod: nil)

        func policy(_ json: String, tenant: String, asset: String?) async throws {
            try await store.putPolicy(Array(json.utf8), tenant: id(tenant), assetID: asset.map { Array($0.utf8) })
        }
        try await policy(#"{"content-type": "hd"}"#, tenant: "acme", asset: nil)
        try await policy(#"{"content-type": "uhd", "hdcp": "type1"}"#, tenant: "acme", asset: Self.uhdAsset)
        try await policy(#"{"content-type": "audio", "hdcp": "none"}"#, tenant: "acme", asset: Self.audioAsset)
        try await policy(#"{"content-type": "8k"}"#, tenant: "acme", asset: Self.badPolicyAsset)
        try await policy(#"{"lease": {"duration": 600}}"#, tenant: "acme", asset: Self.liveAsset)
        try await policy(#"{"lease": {"duration": 120}}"#, tenant: "acme", asset: Self.shortLiveAsset)
        try await policy(#"{"content-type": "sd", "hdcp": "none"}"#, tenant: "globex", asset: nil)
        try await policy(#"{"content-type": "hd"}"#, tenant: "hooli", asset: nil)
    }

    /// SPC options for a device asking for `asset`.
    static func options(_ asset: String, spcVersion: UInt32 = 2, playback: MediaPlaybackInfo? = nil, main: Bool = false) -> SPCOptions {
        var o = SPCOptions()
        o.assetID = Array(asset.utf8)
        o.spcVersion = spcVersion
        o.playback = playback
        if main {
            o.securityLevelReport = SecurityLevelReport(level: .main, kdlVersion: 0)
            o.capabilities = Capabilities(low: Capabilities.hdcpEnforcementBit | Capabilities.securityLevelBaselineBit | Capabilities.securityLevelMainBit)
        }
        return o
    }

    /// A job plus the device session that can open its CKC.
    static func job(
        _ jobID: String, tenant: String = "acme", account: String = "alice", device: SimulatedDevice, _ options: SPCOptions,
        deadline: Int64? = nil, entitlement: String = "", persistent: Bool = false, streamID: [UInt8]? = nil
    ) throws -> (job: LicenseJob, session: DeviceSession) {
        let (spc, session) = try device.makeSPC(options)
        return (
            LicenseJob(
                id: id(jobID), tenant: id(tenant), account: id(account), spc: spc, deadline: deadline, entitlement: entitlement,
                persistent: persistent, streamID: streamID), session
        )
    }
}

/// A store that counts calls and can be told to fail, wrapped around another store.
final class ScriptedStore: LicenseStore, @unchecked Sendable {
    // `@unchecked Sendable`: the mutable fields sit behind `lock`.
    private let inner: any LicenseStore
    private let lock = NSLock()
    private var _fetchCalls = 0
    private var _leaseCalls = 0
    var failFetch: LicenseStoreError? {
        get { lock.withLock { _failFetch } }
        set { lock.withLock { _failFetch = newValue } }
    }
    var failLeases: LicenseStoreError? {
        get { lock.withLock { _failLeases } }
        set { lock.withLock { _failLeases = newValue } }
    }
    private var _failFetch: LicenseStoreError?
    private var _failLeases: LicenseStoreError?

    /// How long each fetch takes, to let concurrent callers overlap.
    let fetchDelay: Duration

    init(_ inner: any LicenseStore, fetchDelay: Duration = .zero) {
        self.inner = inner
        self.fetchDelay = fetchDelay
    }

    var fetchCalls: Int { lock.withLock { _fetchCalls } }
    var leaseCalls: Int { lock.withLock { _leaseCalls } }

    func fetch(_ requests: [StoreRequest]) async throws(LicenseStoreError) -> [StoreResult] {
        let failure = lock.withLock { () -> LicenseStoreError? in
            _fetchCalls += 1
            return _failFetch
        }
        if fetchDelay > .zero { try? await Task.sleep(for: fetchDelay) }
        if let failure { throw failure }
        return try await inner.fetch(requests)
    }

    func acquireLeases(_ requests: [LeaseRequest]) async throws(LicenseStoreError) -> [LeaseResult] {
        let failure = lock.withLock { () -> LicenseStoreError? in
            _leaseCalls += 1
            return _failLeases
        }
        if let failure { throw failure }
        return try await inner.acquireLeases(requests)
    }

    func listSlots(tenant: StoreIdentifier, account: StoreIdentifier, nowMilliseconds: Int64) async throws(LicenseStoreError) -> [LeaseSlot] {
        try await inner.listSlots(tenant: tenant, account: account, nowMilliseconds: nowMilliseconds)
    }

    func putTenant(_ tenant: TenantRecord) async throws(LicenseStoreError) { try await inner.putTenant(tenant) }
    func isProvisioned() async throws(LicenseStoreError) -> Bool { try await inner.isProvisioned() }
    func putContentKey(_ key: WrappedContentKey, tenant: StoreIdentifier, assetID: [UInt8], keyPeriod: StoreIdentifier?) async throws(LicenseStoreError) {
        try await inner.putContentKey(key, tenant: tenant, assetID: assetID, keyPeriod: keyPeriod)
    }
    func putPolicy(_ document: [UInt8], tenant: StoreIdentifier, assetID: [UInt8]?) async throws(LicenseStoreError) {
        try await inner.putPolicy(document, tenant: tenant, assetID: assetID)
    }
}

/// One crypto pool for the whole test target (threads are cheap but not free).
let sharedPool = CryptoPool(threadCount: 2, name: "ksm-test-crypto")
