import FairPlay
import Licensing

/// A clock the tests move by hand (epoch ms).
struct TestClock {
    var now: Int64 = 1_767_000_000_000
    mutating func advance(seconds: Int64) { now += seconds * 1000 }
}

enum Caps {
    static let hdcp = Capabilities.hdcpEnforcementBit
    static let offline = Capabilities.offlineKeyBit
    static let offlineV2 = Capabilities.offlineKeyV2Bit
    static let main = Capabilities.securityLevelMainBit
    static let baseline = Capabilities.securityLevelBaselineBit
}

/// Client facts for a modern client: a security level report, the given capability bits.
func client(
    level: SecurityLevel? = .main,
    kdl: UInt32? = nil,
    caps: UInt64? = Caps.hdcp | Caps.offline | Caps.offlineV2,
    indicator: StreamingIndicator? = nil,
    vm: Bool = false,
    state: PlaybackState? = nil,
    session: UInt64 = 7,
    sync: SyncRequest? = nil,
    deviceInfo: Bool = false
) -> ClientFacts {
    ClientFacts(
        reportedLevel: level, kdlVersion: kdl, capabilities: caps.map { Capabilities(low: $0) }, hasDeviceInfo: deviceInfo,
        streamingIndicator: indicator, isVirtualMachine: vm,
        playback: state.map { MediaPlaybackInfo(creationDate: 0, state: $0, sessionID: session) }, sync: sync)
}

/// A resolved policy from one tenant document given as JSON text.
func policy(_ json: String) throws -> EffectivePolicy {
    try PolicyLayers(tenant: PolicyDocument(json: Array(json.utf8))).resolve()
}

func evaluate(
    _ policy: EffectivePolicy, _ client: ClientFacts, now: Int64 = TestClock().now, entitlement: EntitlementState = .absent, download: Bool = false,
    checkIn: Bool = false, rentalStart: Int64? = nil
) -> PolicyDecision {
    PolicyEngine.evaluate(
        PolicyInput(
            policy: policy, client: client, nowMilliseconds: now, entitlement: entitlement, requestsPersistence: download, checkIn: checkIn,
            rentalStartedAtMilliseconds: rentalStart))
}

/// The package root, for Examples/ and schemas/.
let packageRoot: String = {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // Tests/LicensingTests/<file>
    return parts.joined(separator: "/")
}()
