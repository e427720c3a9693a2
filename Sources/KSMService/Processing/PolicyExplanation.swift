import FairPlay
import Licensing
import Wire

/// What `ksm admin explain` prints: the decision for one job, the terms, the effective policy with
/// the layer that set each field, and the write the worker would make. Never key material.
package struct PolicyExplanation: Sendable {
    package var job: LicenseJob
    package var now: Int64
    package var assetID: [UInt8]?
    package var client: ClientFacts?
    package var rentalStartedAt: Int64?
    /// Set when the job reached the policy engine.
    package var evaluation: LicenseEvaluation?
    /// Set when the job was refused before the engine (SPC, tenant, certificate, key, store).
    package var early: (status: KSMStatus, rule: String, reason: String)?

    init(job: LicenseJob, now: Int64) {
        self.job = job
        self.now = now
    }

    mutating func refuse(_ status: KSMStatus, rule: String, reason: String) { early = (status, rule, reason) }

    /// The reply status the worker would send (before the write round trip, which may still refuse
    /// on the device limit or a full account).
    package var status: KSMStatus {
        if let early { return early.status }
        return evaluation?.refusalStatus ?? .ok
    }

    package var rule: String { early?.rule ?? evaluation?.decision.rule ?? "" }
    package var reason: String { early?.reason ?? evaluation?.decision.reason ?? "" }

    /// The explanation as JSON (sorted keys).
    package var jsonValue: JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(job.id.value), "tenant": .string(job.tenant.value), "account": .string(job.account.value),
            "now": .integer(now), "status": .integer(Int64(status.rawValue)), "status-name": .string(status.name),
            "rule": .string(rule), "reason": .string(reason), "issued-nothing": .bool(true),
        ]
        if let assetID {
            // Text when it is UTF-8 without control characters, else `0x` and hex; the hex is exact.
            o["asset-id"] = .string(ByteKey.displayText(assetID))
            o["asset-id-hex"] = .string(HexEncoding.encode(assetID))
        }
        if let rentalStartedAt { o["rental-started-at"] = .integer(rentalStartedAt) }
        if let client {
            var c: [String: JSONValue] = ["virtual-machine": .bool(client.isVirtualMachine), "device-info": .bool(client.hasDeviceInfo)]
            if let level = client.reportedLevel { c["reported-security-level"] = .string("\(level)") }
            if let kdl = client.kdlVersion { c["kdl-version"] = .integer(Int64(kdl)) }
            if let playback = client.playback { c["playback-state"] = .string("\(playback.state)") }
            if client.sync != nil { c["sync"] = .bool(true) }
            if let caps = client.capabilities { c["capabilities-low"] = .string(String(caps.low, radix: 16)) }
            o["client"] = .object(c)
        }
        guard let evaluation else { return .object(o) }
        switch evaluation.entitlement {
        case .absent: o["entitlement"] = .string("absent")
        case .verified: o["entitlement"] = .string("verified")
        case .rejected(let error): o["entitlement"] = .string("rejected: \(error.refusal.rule)")
        }
        if let terms = evaluation.decision.terms {
            var t: [String: JSONValue] = [
                "includes-content-key": .bool(terms.includesContentKey), "duration": .string(terms.duration.kind),
                "hdcp": .string("\(terms.hdcp)"), "required-security-level": .string("\(terms.requiredSecurityLevel)"),
                "lease-slot": .string("\(terms.leaseSlot)"), "starts-rental": .bool(terms.startsRental), "registers-device": .bool(terms.registersDevice),
            ]
            if let d = terms.duration.contentKeyDuration {
                t["lease-seconds"] = .integer(Int64(d.leaseSeconds))
                t["rental-seconds"] = .integer(Int64(d.rentalSeconds))
            }
            if case .dualExpiry(let storage, let playback, let version) = terms.duration {
                t["offline-key"] = .object([
                    "version": .integer(Int64(version)), "storage-seconds": .integer(Int64(storage)), "playback-seconds": .integer(Int64(playback)),
                ])
            }
            o["terms"] = .object(t)
        }
        if let p = evaluation.policy {
            let values: [(String, String)] = [
                ("content-type", p.contentType.rawValue), ("security-level", "\(p.minimumSecurityLevel)"), ("kdl-minimum", "\(p.minimumKDLVersion)"),
                ("hdcp", "\(p.hdcp)"), ("airplay", "\(p.airPlay)"), ("av-adapter", "\(p.avAdapter)"), ("virtual-machine", "\(p.virtualMachine)"),
                ("rental.not-before", p.rentalNotBefore == .min ? "unbounded" : "\(p.rentalNotBefore)"),
                ("rental.not-after", p.rentalNotAfter == .max ? "unbounded" : "\(p.rentalNotAfter)"),
                ("rental.duration", "\(p.rentalDurationSeconds)"), ("lease.duration", "\(p.leaseDurationSeconds)"),
                ("lease.renewal", "\(p.leaseRenewalAllowed)"), ("persistence", "\(p.persistence)"), ("offline.enabled", "\(p.offlineEnabled)"),
                ("offline.storage-duration", "\(p.offlineStorageSeconds)"), ("offline.playback-duration", "\(p.offlinePlaybackSeconds)"),
                ("device-limit", "\(p.deviceLimit)"), ("max-streams", "\(p.maxStreams)"), ("when-full", p.whenFull.rawValue),
                ("entitlement-required", "\(p.entitlementRequired)"),
            ]
            var fields: [String: JSONValue] = [:]
            for (name, value) in values {
                fields[name] = .object(["value": .string(value), "layer": .string(p.origins[name]?.rawValue ?? "default")])
            }
            o["policy"] = .object(fields)
        }
        o["layers"] = .array(evaluation.layers.ordered.map { .string($0.0.rawValue) })
        if let write = evaluation.write {
            var w: [String: JSONValue] = ["slot": .string("\(write.slot)")]
            if write.slot != .none {
                w["lease-seconds"] = .integer(Int64(write.leaseDurationSeconds))
                w["max-streams"] = .integer(Int64(write.maxConcurrentStreams))
                w["end-oldest-when-full"] = .bool(write.endOldestWhenFull)
            }
            if let limit = write.deviceLimit { w["device-limit"] = .integer(Int64(limit)) }
            if write.rentalAssetID != nil { w["records-rental-start"] = .bool(true) }
            if !write.offlineRecords.isEmpty { w["offline-records"] = .integer(Int64(write.offlineRecords.count)) }
            if !write.invalidatedStreamIDs.isEmpty { w["invalidated-stream-ids"] = .integer(Int64(write.invalidatedStreamIDs.count)) }
            o["would-write"] = .object(w)
        }
        return .object(o)
    }
}
