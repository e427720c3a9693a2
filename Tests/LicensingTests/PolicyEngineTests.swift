import FairPlay
import Licensing
import Testing

/// One row of the rules table: a policy, a client, the circumstances, the refusal expected.
struct RefusalCase: Sendable, CustomTestStringConvertible {
    var name: String
    var policy: String
    var client: ClientFacts
    var entitlement: EntitlementState = .absent
    var download = false
    var checkIn = false
    var nowOffsetSeconds: Int64 = 0
    var rentalStartOffsetSeconds: Int64? = nil
    var expected: PolicyRefusal
    var testDescription: String { name }
}

let windowStart = TestClock().now
let window = #"{"not-before": \#(windowStart), "not-after": \#(windowStart + 3_600_000)}"#

let refusalCases: [RefusalCase] = [
    .init(name: "uhd to a Baseline client", policy: #"{"content-type": "uhd"}"#, client: client(level: .baseline), expected: .securityLevelBelowMinimum),
    .init(
        name: "uhd to a Main client whose KDL is below 31", policy: #"{"content-type": "uhd"}"#, client: client(level: .main, kdl: 30),
        expected: .securityLevelKDL),
    .init(
        name: "uhd to a Main client below a raised KDL minimum", policy: #"{"content-type": "uhd", "kdl-minimum": 40}"#, client: client(level: .main, kdl: 35),
        expected: .securityLevelKDL),
    .init(
        name: "uhd to a client whose capability bits say Baseline and not Main", policy: #"{"content-type": "uhd"}"#,
        client: client(level: nil, caps: Caps.hdcp | Caps.baseline), expected: .securityLevelBelowMinimum),
    .init(
        name: "uhd to a client without HDCP enforcement", policy: #"{"content-type": "uhd"}"#, client: client(level: .main, caps: 0),
        expected: .hdcpType1NeedsCapability),
    .init(
        name: "hd asking type 1 from a client without capabilities", policy: #"{"content-type": "hd", "hdcp": "type1"}"#,
        client: client(level: .baseline, caps: nil), expected: .hdcpType1NeedsCapability),
    .init(name: "AirPlay denied", policy: #"{"content-type": "hd", "airplay": "deny"}"#, client: client(indicator: .airPlay), expected: .airPlayDenied),
    .init(
        name: "AV adapter denied", policy: #"{"content-type": "hd", "av-adapter": "deny"}"#, client: client(indicator: .avAdapter), expected: .avAdapterDenied),
    .init(
        name: "AirPlay capped at Baseline for uhd", policy: #"{"content-type": "uhd", "airplay": "cap-baseline"}"#, client: client(indicator: .airPlay),
        expected: .airPlayCapped),
    .init(
        name: "AV adapter capped at audio for hd", policy: #"{"content-type": "hd", "av-adapter": "cap-audio"}"#, client: client(indicator: .avAdapter),
        expected: .avAdapterCapped),
    .init(
        name: "virtual machine denied", policy: #"{"content-type": "sd", "virtual-machine": "deny"}"#, client: client(vm: true), expected: .virtualMachineDenied
    ),
    .init(
        name: "virtual machine as Baseline for uhd", policy: #"{"content-type": "uhd", "virtual-machine": "cap-baseline"}"#, client: client(vm: true),
        expected: .virtualMachineCapped),
    .init(
        name: "rental window not open yet", policy: #"{"content-type": "hd", "rental": \#(window)}"#, client: client(), nowOffsetSeconds: -1,
        expected: .rentalNotYetValid),
    .init(
        name: "rental window closed", policy: #"{"content-type": "hd", "rental": \#(window)}"#, client: client(), nowOffsetSeconds: 3600,
        expected: .rentalExpired),
    .init(
        name: "48-hour rental over for a new playback", policy: #"{"content-type": "hd", "rental": {"duration": 172800}}"#, client: client(state: .readyToPlay),
        nowOffsetSeconds: 172_800, rentalStartOffsetSeconds: 0, expected: .rentalPeriodOver),
    .init(
        name: "download with neither offline nor persistence", policy: #"{"content-type": "hd"}"#, client: client(), download: true,
        expected: .offlineNotAllowed),
    .init(
        name: "lease without a media playback state under requires-playback-state",
        policy: #"{"content-type": "hd", "lease": {"duration": 60, "requires-playback-state": true}}"#, client: client(state: nil),
        expected: .leaseNeedsPlaybackState),
    .init(
        name: "check-in with a sync v1 SPC", policy: #"{"content-type": "hd"}"#,
        client: client(sync: .v1(SyncV1(contentID: [UInt8](repeating: 1, count: 16), durationToExpiry: 60))), checkIn: true, expected: .checkInNeedsSync),
    .init(name: "check-in without a sync TLLV", policy: #"{"content-type": "hd"}"#, client: client(), checkIn: true, expected: .checkInNeedsSync),
    .init(
        name: "state 3 renewal not allowed", policy: #"{"content-type": "hd", "lease": {"duration": 60, "renewal": false}}"#,
        client: client(state: .leaseRenewal), expected: .leaseRenewalNotAllowed),
    .init(name: "token required, none presented", policy: #"{"content-type": "hd", "entitlement-required": true}"#, client: client(), expected: .tokenMissing),
    .init(
        name: "token presented and rejected even where not required", policy: #"{"content-type": "hd"}"#, client: client(),
        entitlement: .rejected(.badSignature), expected: .tokenBadSignature),
]

@Suite("Policy engine: rules")
struct PolicyEngineRuleTests {
    @Test("each rule refuses with its own rule name and status", arguments: refusalCases)
    func refuses(_ c: RefusalCase) throws {
        let p = try policy(c.policy)
        let now = TestClock().now + c.nowOffsetSeconds * 1000
        let d = evaluate(
            p, c.client, now: now, entitlement: c.entitlement, download: c.download, checkIn: c.checkIn,
            rentalStart: c.rentalStartOffsetSeconds.map { TestClock().now + $0 * 1000 })
        #expect(d.refusal == c.expected, "\(d)")
        #expect(d.rule == c.expected.rule)
        #expect(d.status == c.expected.status)
        #expect(d.terms == nil)
    }

    @Test("the same clients pass once the rule is relaxed (each refusal row is decided by its rule)", arguments: refusalCases)
    func relaxedPasses(_ c: RefusalCase) throws {
        // Replace the content type with sd and drop every restriction: only the client's facts remain.
        let relaxed = try policy(#"{"content-type": "sd", "hdcp": "none", "kdl-minimum": 0, "persistence": "unlimited"}"#)
        let d = evaluate(relaxed, c.client, download: c.download, checkIn: c.checkIn)
        if c.expected == .checkInNeedsSync {
            // No policy relaxes it: a check-in is answered from a sync v2 TLLV or not at all (SDK 26).
            #expect(d.refusal == .checkInNeedsSync)
        } else {
            #expect(d.isIssued, "\(c.name): \(d)")
        }
    }

    @Test("every refusal has a distinct rule, and project codes sit in -43011...-43030, -43034 or are existing codes")
    func refusalCatalogue() {
        let rules = PolicyRefusal.allCases.map(\.rule)
        #expect(Set(rules).count == rules.count)
        for r in PolicyRefusal.allCases {
            let s = r.status
            #expect(s == -42604 || s == -42585 || s == -43004 || s == -43034 || (-43030 ... -43011).contains(s), "\(r)")
            #expect(r.statusName != "unknown")
        }
        let tokenStatuses = [
            PolicyRefusal.tokenMissing, .tokenMalformed, .tokenUnknownKeyID, .tokenBadSignature, .tokenExpired, .tokenNotYetValid, .tokenWrongAccount,
            .tokenWrongAsset, .tokenWrongTenant,
        ].map(\.status)
        #expect(Set(tokenStatuses).count == tokenStatuses.count)
    }

    @Test(
        "security level is read as SDK 26 reads it: the report, else Baseline-only capability bits, else every level; a KDL below 31 is flagged",
        arguments: [
            (client(level: .main), SecurityLevel.main, "security-level-report", false),
            (client(level: .main, kdl: 30), .main, "security-level-report", true),
            (client(level: .main, kdl: 31), .main, "security-level-report", false),
            (client(level: .baseline, kdl: 10), .baseline, "security-level-report", true),
            (client(level: nil, caps: Caps.main), .main, "capabilities", false),
            (client(level: nil, caps: Caps.baseline), .baseline, "capabilities", false),
            (client(level: nil, caps: Caps.baseline | Caps.main), .main, "capabilities", false),
            (client(level: SecurityLevel(rawValue: 99), caps: Caps.main), SecurityLevel(rawValue: 99), "security-level-report", false),
            (client(level: nil, caps: Caps.hdcp, deviceInfo: true), .main, "unreported", false),
            (client(level: nil, caps: nil), .main, "unreported", false),
        ])
    func derivedLevel(facts: ClientFacts, level: SecurityLevel, source: String, kdlBelow: Bool) {
        let d = facts.derivedSecurity(minimumKDL: 31)
        #expect(d.level == level)
        #expect(d.source == source)
        #expect(d.kdlBelowMinimum == kdlBelow)
    }

    @Test("uhd is issued to an older client with capability bit 0 and no security fields (SDK 26 allows it)")
    func uhdToUnreportedClient() throws {
        let d = evaluate(try policy(#"{"content-type": "uhd"}"#), client(level: nil, caps: Caps.hdcp, state: .readyToPlay, deviceInfo: true))
        #expect(d.isIssued, "\(d)")
        #expect(d.terms?.requiredSecurityLevel == .main)
        #expect(d.terms?.hdcp == .type1)
    }

    @Test("a KDL below 31 is refused for every content type, as SDK 26 refuses it", arguments: ContentType.allCases)
    func kdlRefusedForEveryType(_ type: ContentType) throws {
        let d = evaluate(try policy(#"{"content-type": "\#(type.rawValue)"}"#), client(level: .main, kdl: 30))
        #expect(d.refusal == .securityLevelKDL)
        #expect(d.status == -42604)
    }

    @Test("a lease without a playback state issues the key with no slot by default")
    func leaseWithoutPlaybackState() throws {
        let d = evaluate(try policy(#"{"content-type": "hd", "lease": {"duration": 60}}"#), client(state: nil))
        #expect(d.isIssued)
        #expect(d.rule == "lease:no-playback-state")
        #expect(d.terms?.leaseSlot == LeaseSlotNeed.none)
        #expect(d.terms?.includesContentKey == true)
    }

    @Test(
        "session stopped and unnamed playback states are answered, never refused", arguments: [PlaybackState.sessionStopped, PlaybackState(rawValue: 0x1234)])
    func otherPlaybackStates(_ state: PlaybackState) throws {
        let d = evaluate(try policy(#"{"content-type": "hd", "lease": {"duration": 60}}"#), client(state: state))
        #expect(d.isIssued, "\(d)")
        #expect(d.terms?.includesContentKey == true)
        if state == .sessionStopped {
            #expect(d.terms?.leaseSlot == LeaseSlotNeed.none)
            #expect(d.rule == "playback:session-stopped")
        } else {
            #expect(d.terms?.leaseSlot == .acquire(seconds: 60))
        }
    }

    @Test("a sync SPC is a check-in only when the job says so; otherwise it is an ordinary request with a key")
    func syncWithoutCheckIn() throws {
        let sync = SyncRequest.v2(
            SyncV2(serverChallenge: 1, flags: [.report], titleID: [UInt8](repeating: 2, count: 16), durationToExpiry: 10, invalidatedStreamIDs: []))
        let p = try policy(#"{"content-type": "hd"}"#)
        let ordinary = evaluate(p, client(state: .readyToPlay, sync: sync))
        #expect(ordinary.terms?.includesContentKey == true)
        let checkIn = evaluate(p, client(state: .readyToPlay, sync: sync), checkIn: true)
        #expect(checkIn.rule == "sync:check-in")
        #expect(checkIn.terms?.includesContentKey == false)
    }

    @Test("a Main client on AirPlay still gets hd under cap-baseline, and uhd when AirPlay is allowed")
    func capsOnlyBiteAboveThem() throws {
        let hd = try policy(#"{"content-type": "hd", "airplay": "cap-baseline"}"#)
        #expect(evaluate(hd, client(indicator: .airPlay)).isIssued)
        let uhd = try policy(#"{"content-type": "uhd", "airplay": "allow"}"#)
        #expect(evaluate(uhd, client(indicator: .airPlay)).isIssued)
        // A device value other than the two known indicators means the device itself plays.
        let denied = try policy(#"{"content-type": "uhd", "airplay": "deny", "av-adapter": "deny"}"#)
        #expect(evaluate(denied, client(indicator: .device(42))).isIssued)
    }

    @Test("a tenant may lower Apple's uhd rule; the CKC then requires what the tenant asked")
    func tenantOverridesApple() throws {
        let p = try policy(#"{"content-type": "uhd", "security-level": "baseline", "hdcp": "type0"}"#)
        let d = evaluate(p, client(level: .baseline, caps: 0))
        #expect(d.terms?.requiredSecurityLevel == .baseline)
        #expect(d.terms?.hdcp == .type0)
    }

    @Test(
        "the CKC carries the policy's HDCP and required level",
        arguments: [
            (#"{"content-type": "uhd"}"#, HDCPRequirement.type1, SecurityLevel.main),
            (#"{"content-type": "hd"}"#, .type0, .baseline),
            (#"{"content-type": "sd", "hdcp": "none"}"#, .notRequired, .baseline),
            (#"{"content-type": "audio"}"#, .type0, .audio),
        ])
    func ckcLevels(json: String, hdcp: HDCPRequirement, level: SecurityLevel) throws {
        let d = evaluate(try policy(json), client())
        #expect(d.terms?.hdcp == hdcp)
        #expect(d.terms?.requiredSecurityLevel == level)
        #expect(d.terms?.includesContentKey == true)
    }

    @Test("a verified token passes where one is required")
    func verifiedToken() throws {
        let p = try policy(#"{"content-type": "hd", "entitlement-required": true}"#)
        #expect(evaluate(p, client(), entitlement: .verified).isIssued)
    }

    @Test("a check-in with a sync v2 SPC gets an answer without a key, needs no token, and is never refused for the client's level")
    func syncCheckIn() throws {
        let p = try policy(#"{"content-type": "uhd", "entitlement-required": true}"#)
        let sync = SyncRequest.v2(
            SyncV2(serverChallenge: 9, flags: [.secureInvalidation], titleID: Array(repeating: 1, count: 16), durationToExpiry: 100, invalidatedStreamIDs: []))
        let d = evaluate(p, client(level: .baseline, caps: 0, sync: sync), checkIn: true)
        #expect(d.rule == "sync:check-in")
        #expect(d.terms?.includesContentKey == false)
        #expect(d.terms?.duration == KeyDurationTerms.none)
    }
}

@Suite("Policy engine: combinations the guide forbids never come out")
struct ForbiddenCombinationTests {
    static let policies = [
        #"{"content-type": "hd", "lease": {"duration": 60}, "offline": {"enabled": true, "storage-duration": 100, "playback-duration": 50}, "persistence": "unlimited"}"#,
        #"{"content-type": "hd", "lease": {"duration": 60}, "rental": {"duration": 3600}, "persistence": "rental-duration"}"#,
        #"{"content-type": "uhd", "offline": {"enabled": true}, "persistence": "unlimited"}"#,
        #"{"content-type": "sd", "rental": {"duration": 100}, "offline": {"enabled": true}}"#,
    ]
    static let states: [PlaybackState?] = [nil, .readyToPlay, .playingOrPaused, .leaseRenewal]
    static let capSets: [UInt64?] = [nil, 0, Caps.hdcp, Caps.offline, Caps.offlineV2, Caps.offline | Caps.offlineV2, Caps.hdcp | Caps.offline | Caps.offlineV2]

    @Test(
        "no offline key with a content key duration, no lease with an offline key, the offline key only with bit 3 and a playback state, type 1 only with bit 0, states 1 and 3 always with a key",
        arguments: policies)
    func exhaustive(json: String) throws {
        let p = try policy(json)
        var issued = 0
        for state in Self.states {
            for caps in Self.capSets {
                for download in [false, true] {
                    let c = client(caps: caps, state: state)
                    let d = evaluate(p, c, download: download)
                    guard let t = d.terms else { continue }
                    issued += 1
                    if case .dualExpiry(_, _, let v) = t.duration {
                        // The offline key TLLV only where the CKC carries it: bit 3 and a playback state.
                        #expect(t.duration.contentKeyDuration == nil)
                        #expect(t.leaseSlot == .none)
                        #expect(v == 2)
                        #expect(c.capabilities?.offlineKeyV2 == true && c.playback != nil)
                    }
                    // A lease without a playback state goes out with no slot (and the CKC carries no duration).
                    if t.duration.leaseSeconds != nil, c.playback == nil { #expect(t.leaseSlot == .none) }
                    if t.hdcp == .type1 { #expect(c.capabilities?.hdcpEnforcement == true) }
                    if state == .readyToPlay || state == .leaseRenewal { #expect(t.includesContentKey) }
                    if download { #expect(t.leaseSlot == .none) }
                }
            }
        }
        #expect(issued > 0)
    }
}

/// One row of SDK 26's offline table: the client's bits 1 and 3, whether the SPC has a playback
/// state, and the policy's offline durations.
struct OfflineCase: Sendable, CustomTestStringConvertible {
    var bits: UInt64?
    var playback: Bool
    var storage: UInt32
    var playbackSeconds: UInt32
    var testDescription: String {
        let name =
            switch bits {
            case nil: "no capabilities TLLV"
            case 0?: "neither bit"
            case Caps.offline?: "bit 1 only"
            case Caps.offlineV2?: "bit 3 only"
            default: "bits 1 and 3"
            }
        return "\(name), \(playback ? "playback state" : "no playback state"), storage \(storage) s, playback \(playbackSeconds) s"
    }

    static let all: [OfflineCase] = [nil, 0, Caps.offline, Caps.offlineV2, Caps.offline | Caps.offlineV2].flatMap { bits in
        [true, false].flatMap { playback in
            [(2_592_000, 86_400), (0, 0), (0, 86_400)].map { OfflineCase(bits: bits, playback: playback, storage: $0.0, playbackSeconds: $0.1) }
        }
    }
}

@Suite("Policy engine: offline downloads as SDK 26 answers them")
struct OfflineDownloadTests {
    /// SDK 26 checkSupportedFeatures and populateTagsCustom, written out: the offline key TLLV (v2,
    /// since the worker names stream and title IDs) only to bit 3 with a playback state; any other
    /// client with a playback state gets `{0, storage, persistence-and-duration}`, or `persistence`
    /// when both durations are 0; without a playback state no terms at all. Never a refusal.
    static func sdk26(_ c: OfflineCase) -> (KeyDurationTerms, String) {
        guard c.playback else { return (.none, "offline:no-playback-state") }
        if let bits = c.bits, bits & Caps.offlineV2 != 0 {
            return (.dualExpiry(storage: c.storage, playback: c.playbackSeconds, offlineKeyVersion: 2), "offline:dual-expiry")
        }
        let limited = c.storage != 0 || c.playbackSeconds != 0
        return (limited ? .persistableLimited(seconds: c.storage) : .persistableUnlimited, "offline:persistable")
    }

    @Test("each combination of bits 1 and 3, playback state and durations gets SDK 26's terms and a rule that names them", arguments: OfflineCase.all)
    func sdk26Table(_ c: OfflineCase) throws {
        let p = try policy(
            #"{"content-type": "hd", "offline": {"enabled": true, "storage-duration": \#(c.storage), "playback-duration": \#(c.playbackSeconds)}}"#)
        let facts = client(caps: c.bits.map { $0 | Caps.hdcp }, state: c.playback ? .readyToPlay : nil)
        let d = evaluate(p, facts, download: true)
        let (duration, rule) = Self.sdk26(c)
        let terms = try #require(d.terms, "\(d)")
        #expect(terms.duration == duration)
        #expect(d.rule == rule)
        #expect(terms.includesContentKey)
        #expect(terms.leaseSlot == LeaseSlotNeed.none)
        // The engine's terms are what FairPlay's own rule sends for the same client.
        let delivery = OfflineDelivery(
            storageSeconds: c.storage, playbackSeconds: c.playbackSeconds, capabilities: facts.capabilities, hasPlaybackState: c.playback)
        switch delivery {
        case .offlineKey: #expect(terms.duration.offlineKey(streamID: Array(repeating: 1, count: 16), titleID: Array(repeating: 2, count: 16)) != nil)
        case .contentKeyDuration(let sent): #expect(terms.duration.contentKeyDuration == sent)
        case .noTerms: #expect(terms.duration == KeyDurationTerms.none)
        }
    }

    @Test("with offline enabled the persistence setting does not decide downloads: a client without bit 3 gets the offline storage")
    func offlineWinsOverPersistence() throws {
        let p = try policy(
            #"{"content-type": "hd", "offline": {"enabled": true, "storage-duration": 600, "playback-duration": 60}, "persistence": "unlimited"}"#)
        let d = evaluate(p, client(caps: Caps.hdcp | Caps.offline, state: .readyToPlay), download: true)
        #expect(d.terms?.duration == .persistableLimited(seconds: 600))
        #expect(d.rule == "offline:persistable")
    }

    @Test("the retired offline:needs-capability refusal is never returned")
    func neverRefusedForCapabilities() throws {
        let p = try policy(#"{"content-type": "sd", "hdcp": "none", "offline": {"enabled": true}}"#)
        for c in OfflineCase.all {
            let d = evaluate(p, client(caps: c.bits, state: c.playback ? .readyToPlay : nil), download: true)
            #expect(d.isIssued, "\(c.testDescription): \(d)")
            #expect(d.refusal != .offlineNeedsCapability)
        }
    }
}
