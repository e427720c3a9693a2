import FairPlay

/// The policy engine: one pure function from a resolved policy, the client's facts, a clock and the
/// token's outcome to a decision. No I/O, no hidden clock, no randomness: the same input always
/// gives the same decision, which is what lets `ksm admin explain` replay a job and what makes every
/// rule table-testable.
///
/// Checks run in this order, and the first that fails decides (its rule is the reply's `rule`):
/// 1. check-in: answered from a sync v2 TLLV without a key (it grants nothing, so it needs no
///    token); without sync flags it is refused, as by SDK 26. A sync SPC that is not a check-in is an
///    ordinary request, as in SDK 26;
/// 2. entitlement: a rejected token, or none where the policy requires one;
/// 3. where it plays: VM denied, AirPlay / AV adapter denied;
/// 4. security level: a Kext Deny List version below the minimum is refused (SDK 26); the client's
///    level (report, else Baseline-only capability bits, else every level: SDK 26) against the
///    minimum, then the VM and AirPlay / AV adapter caps;
/// 5. HDCP type 1 only to clients with capability bit 0;
/// 6. playback state: none of them is refused (SDK 26 reads the state without judging it); state 2
///    may answer without a key, "session stopped" takes no new slot, any other unnamed state is read
///    as state 1;
/// 7. rental window (not-before, not-after) and rental period;
/// 8. the shape of the license: a download (offline terms, as ``OfflineDelivery`` carries them to
///    this client; else a persistable key) or a stream (lease and rental by playback state).
package enum PolicyEngine {
    package static func evaluate(_ input: PolicyInput) -> PolicyDecision {
        let p = input.policy
        let c = input.client
        let now = input.nowMilliseconds

        // 1. Guide, "Sync": a check-in reports or invalidates offline keys. It is answered and
        // recorded (OfflineSync), never given a key. SDK 26 refuses one without sync flags.
        if input.checkIn {
            guard let sync = c.sync, !sync.flags.isEmpty else {
                return .refuse(.checkInNeedsSync, "check-in requested but the SPC has no sync v2 TLLV with flags")
            }
            let terms = LicenseTerms(includesContentKey: false, duration: .none, hdcp: p.hdcp, requiredSecurityLevel: p.minimumSecurityLevel)
            return .issue(terms, rule: "sync:check-in", reason: "sync SPC (\(sync.versionName)): check-in answered without a content key")
        }

        // 2. Entitlement.
        switch input.entitlement {
        case .rejected(let error):
            return .refuse(error.refusal, error.description)
        case .absent where p.entitlementRequired:
            return .refuse(.tokenMissing, EntitlementError.missing.description)
        case .absent, .verified:
            break
        }

        // 3. Where it plays.
        if c.isVirtualMachine, p.virtualMachine == .deny {
            return .refuse(.virtualMachineDenied, "the client runs in a virtual machine and the policy denies virtual machines")
        }
        let output = OutputRoute(c.streamingIndicator, policy: p)
        if let output, output.restriction == .deny {
            return .refuse(output.denied, "playback through \(output.name) is denied by the policy")
        }

        // 4. Security level.
        let required = p.minimumSecurityLevel
        let client = c.derivedSecurity(minimumKDL: p.minimumKDLVersion)
        // SDK 26 refuses a client below the Kext Deny List minimum whatever the content.
        if client.kdlBelowMinimum {
            return .refuse(.securityLevelKDL, "Kext Deny List \(c.kdlVersion ?? 0) is below the minimum \(p.minimumKDLVersion)")
        }
        if !client.level.satisfies(required) {
            return .refuse(.securityLevelBelowMinimum, "client security level \(client.level) (\(client.source)) is below the required \(required)")
        }
        if c.isVirtualMachine, case .cap(let cap) = p.virtualMachine, cap < required {
            return .refuse(.virtualMachineCapped, "the policy trusts a virtual machine with \(cap) at most, below the required \(required)")
        }
        if let output, case .cap(let cap) = output.restriction, cap < required {
            return .refuse(output.capped, "the policy trusts \(output.name) with \(cap) at most, below the required \(required)")
        }

        // 5. HDCP (fps-facts: type 1 only to clients with capability bit 0).
        if p.hdcp == .type1, c.capabilities?.hdcpEnforcement != true {
            return .refuse(.hdcpType1NeedsCapability, "HDCP type 1 is required but the client does not announce HDCP enforcement (capability bit 0)")
        }

        // 6. Playback state (guide table 4-2). SDK 26 refuses none; an unnamed state is read as a start.
        let stopped = c.playback?.state == .sessionStopped
        let state = c.playback.map { $0.state.number ?? 1 }
        let continuing = state == 2 || state == 3

        // 7. Rental window and period.
        if now < p.rentalNotBefore {
            return .refuse(.rentalNotYetValid, "the rental window opens in \(Self.secondsCeil(p.rentalNotBefore - now)) s")
        }
        if now >= p.rentalNotAfter {
            return .refuse(.rentalExpired, "the rental window closed \((now - p.rentalNotAfter) / 1000) s ago")
        }
        var periodRemaining: Int64?
        var startsRental = false
        if p.rentalDurationSeconds > 0 {
            let total = Int64(p.rentalDurationSeconds) * 1000
            if let start = input.rentalStartedAtMilliseconds {
                // A start in the future (clock skew between workers) counts as now.
                let elapsed = max(0, now - start)
                if elapsed < total {
                    periodRemaining = total - elapsed
                } else if !continuing {
                    // Guide, "Simultaneous Renting and Leasing": a rental covers the start of a
                    // stream; one already playing continues, under its lease.
                    return .refuse(.rentalPeriodOver, "the rental period of \(p.rentalDurationSeconds) s ended \((elapsed - total) / 1000) s ago")
                }
            } else {
                periodRemaining = total
                startsRental = true
            }
        }
        let windowRemaining: Int64? = p.rentalNotAfter == .max ? nil : p.rentalNotAfter - now
        let rentalSeconds: UInt32? = [periodRemaining, windowRemaining].compactMap { $0 }.min().map(Self.secondsCeil)
        let registers = p.deviceLimit != .unlimited

        // 8a. Downloads.
        if input.requestsPersistence {
            if p.offlineEnabled {
                // How the terms reach this client is FairPlay's one rule (OfflineDelivery, SDK 26
                // checkSupportedFeatures and populateTagsCustom), the same one CKCBuilder applies, so
                // the rule, the offline record and the CKC agree. SDK 26 refuses no client here.
                let storage = Self.tighter(p.offlineStorageSeconds, rentalSeconds)
                let playback = p.offlinePlaybackSeconds
                let delivery = OfflineDelivery(
                    storageSeconds: storage, playbackSeconds: playback, capabilities: c.capabilities, hasPlaybackState: c.playback != nil)
                let duration: KeyDurationTerms
                let rule: String
                let reason: String
                switch delivery {
                case .offlineKey:
                    // The worker always names a stream and a title ID, so SDK 26 sends version 2.
                    duration = .dualExpiry(storage: storage, playback: playback, offlineKeyVersion: 2)
                    rule = "offline:dual-expiry"
                    reason = "offline key v2: storage \(storage) s, playback \(playback) s (0 = no limit)"
                case .contentKeyDuration(let persistable):
                    duration = persistable.keyType == .persistableLimited ? .persistableLimited(seconds: persistable.rentalSeconds) : .persistableUnlimited
                    rule = "offline:persistable"
                    reason =
                        "no offline key v2 (capability bit 3): the offline terms go as a content key duration \(duration.kind), storage \(storage) s"
                        + (playback == 0 ? "" : " (the playback duration has no field there)")
                case .noTerms:
                    duration = .none
                    rule = "offline:no-playback-state"
                    reason = "no media playback state: key issued without an offline key or a content key duration"
                }
                let terms = LicenseTerms(
                    includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, startsRental: startsRental,
                    registersDevice: registers)
                return .issue(terms, rule: rule, reason: reason)
            }
            let duration: KeyDurationTerms
            let rule: String
            switch p.persistence {
            case .none:
                return .refuse(.offlineNotAllowed, "the policy allows neither offline rental nor persistable keys")
            case .unlimited:
                // A window or rental period that ends still bounds a key that would otherwise be unlimited.
                duration = rentalSeconds.map { .persistableLimited(seconds: $0) } ?? .persistableUnlimited
                rule = rentalSeconds == nil ? "persistence:unlimited" : "persistence:limited-by-rental"
            case .limitedToRental:
                guard let rentalSeconds else {
                    // PolicyLayers.resolve refuses this combination; kept closed rather than trapped.
                    return .refuse(.offlineNotAllowed, "persistence is limited to a rental that has no duration")
                }
                duration = .persistableLimited(seconds: rentalSeconds)
                rule = "persistence:limited-by-rental"
            }
            let terms = LicenseTerms(
                includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, startsRental: startsRental,
                registersDevice: registers)
            return .issue(terms, rule: rule, reason: "persistable key: \(duration.kind)")
        }

        // 8b. Streams.
        let lease = p.leaseDurationSeconds
        let duration = Self.streamDuration(lease: lease, rental: rentalSeconds)
        guard let state else {
            // SDK 26 issues a leased key to a client without a playback state, without a duration
            // TLLV; with no session to bind it to, it takes no slot. A policy may refuse it instead.
            if lease > 0, p.leaseRequiresPlaybackState {
                return .refuse(.leaseNeedsPlaybackState, "the policy leases keys only to SPCs with a media playback state, and this one has none")
            }
            let terms = LicenseTerms(
                includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, startsRental: startsRental,
                registersDevice: registers)
            if lease > 0 {
                return .issue(terms, rule: "lease:no-playback-state", reason: "no media playback state: key issued without a duration TLLV and without a slot")
            }
            return .issue(terms, rule: rentalSeconds == nil ? "policy:granted" : "rental:granted", reason: "key issued, duration \(duration.kind)")
        }
        if stopped {
            // The player ended its session: SDK 26 answers as for any state, and a stopped session
            // must not take a new slot (its slot ends with its lease).
            let terms = LicenseTerms(includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, registersDevice: registers)
            return .issue(terms, rule: "playback:session-stopped", reason: "session stopped: key issued, duration \(duration.kind), no slot taken")
        }
        switch state {
        case 1:
            let slot: LeaseSlotNeed = lease > 0 ? .acquire(seconds: lease) : .none
            let terms = LicenseTerms(
                includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, leaseSlot: slot, startsRental: startsRental,
                registersDevice: registers)
            let rule = lease > 0 ? "lease:granted" : (rentalSeconds == nil ? "policy:granted" : "rental:granted")
            return .issue(terms, rule: rule, reason: "state 1: key issued, duration \(duration.kind)")
        case 2:
            if duration == .none {
                // Nothing to answer a duration with: the key is valid for the playback, so send it.
                let terms = LicenseTerms(includesContentKey: true, duration: .none, hdcp: p.hdcp, requiredSecurityLevel: required, registersDevice: registers)
                return .issue(terms, rule: "playback:state2-no-terms", reason: "state 2 with neither lease nor rental: key issued")
            }
            let slot: LeaseSlotNeed = lease == 0 ? .none : (p.leaseRenewalAllowed ? .renew(seconds: lease) : .hold)
            let terms = LicenseTerms(
                includesContentKey: false, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, leaseSlot: slot, registersDevice: registers)
            return .issue(terms, rule: "playback:duration-only", reason: "state 2: duration answer (\(duration.kind)) without a content key")
        default:
            if lease > 0, !p.leaseRenewalAllowed {
                return .refuse(.leaseRenewalNotAllowed, "state 3 asks to renew the lease and the policy does not allow renewal")
            }
            let slot: LeaseSlotNeed = lease > 0 ? .renew(seconds: lease) : .none
            let terms = LicenseTerms(
                includesContentKey: true, duration: duration, hdcp: p.hdcp, requiredSecurityLevel: required, leaseSlot: slot, registersDevice: registers)
            return .issue(terms, rule: lease > 0 ? "lease:renewed" : "rental:granted", reason: "state 3: key issued, duration \(duration.kind)")
        }
    }

    /// Lease and rental combined into one content key duration.
    static func streamDuration(lease: UInt32, rental: UInt32?) -> KeyDurationTerms {
        switch (lease > 0, rental) {
        case (true, let r?): .leaseAndRental(lease: lease, rental: r)
        case (true, nil): .lease(seconds: lease)
        case (false, let r?): .rental(seconds: r)
        case (false, nil): .none
        }
    }

    /// Milliseconds to whole seconds, rounded up (a key must not die before its window) and clamped
    /// to what the 32-bit TLLV field holds.
    static func secondsCeil(_ milliseconds: Int64) -> UInt32 {
        guard milliseconds > 0 else { return 0 }
        let s = milliseconds / 1000 + (milliseconds % 1000 == 0 ? 0 : 1)
        return UInt32(clamping: s)
    }

    /// The tighter of a duration where 0 means "no limit" and an optional bound.
    static func tighter(_ seconds: UInt32, _ bound: UInt32?) -> UInt32 {
        guard let bound else { return seconds }
        return seconds == 0 ? bound : min(seconds, bound)
    }
}

/// The AirPlay or AV adapter rule that applies to a streaming indicator, if any.
private struct OutputRoute {
    var restriction: ClientRestriction
    var denied: PolicyRefusal
    var capped: PolicyRefusal
    var name: String

    init?(_ indicator: StreamingIndicator?, policy: EffectivePolicy) {
        switch indicator {
        case .airPlay?: self.init(restriction: policy.airPlay, denied: .airPlayDenied, capped: .airPlayCapped, name: "AirPlay")
        case .avAdapter?: self.init(restriction: policy.avAdapter, denied: .avAdapterDenied, capped: .avAdapterCapped, name: "an AV adapter")
        case .device?, nil: return nil
        }
    }

    init(restriction: ClientRestriction, denied: PolicyRefusal, capped: PolicyRefusal, name: String) {
        self.restriction = restriction
        self.denied = denied
        self.capped = capped
        self.name = name
    }
}

extension SyncRequest {
    var versionName: String {
        switch self {
        case .v1: "v1"
        case .v2: "v2"
        }
    }
}
