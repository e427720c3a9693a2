import FairPlay
import KSMService

/// The baseline every end-to-end figure is a ratio against: SPC to CKC on the crypto pool (all its
/// threads), no Kafka, no Redis. One definition, so `bench e2e` and `bench storm` measure the same.
struct InProcessBaseline: Sendable {
    let server: KeyServerModule
    let pool: CryptoPool
    let spcs: [[UInt8]]

    /// A lease, HDCP and security level TLLVs: what a typical live-stream CKC carries.
    static let content = CKCContent(
        contentKey: [UInt8](repeating: 0x3b, count: 16), contentIV: [UInt8](repeating: 0x42, count: 16),
        keyDuration: .lease(300), hdcp: .type0, requiredSecurityLevel: .baseline)

    /// Opens a few SPCs first so pooled key contexts and caches are warm.
    func warmUp() async {
        let server = self.server
        _ = await pool.map(Array(spcs.prefix(50))) { spc in try? server.makeCKC(for: server.open(spc), Self.content) }
    }

    /// CKCs per second over `spcs`.
    func measure() async -> Double {
        let server = self.server
        let start = ContinuousClock.now
        _ = await pool.map(spcs) { spc in try? server.makeCKC(for: server.open(spc), Self.content) }
        return Double(spcs.count) / (ContinuousClock.now - start).seconds
    }
}
