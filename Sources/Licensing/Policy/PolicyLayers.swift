/// The documents that make up one license's policy, lowest precedence first: tenant defaults, then
/// the asset's overrides, then the key period's, then the entitlement token's `policy` claim.
/// Apple's default rules for the content type sit under all of them.
///
/// A field set in a higher layer wins; a layer that leaves a field nil keeps the lower one's.
/// Sections (`rental`, `lease`, `offline`) merge field by field, so an asset can move
/// `rental.not-after` and keep the tenant's `rental.duration`.
package struct PolicyLayers: Hashable, Sendable {
    package var tenant: PolicyDocument?
    package var asset: PolicyDocument?
    package var keyPeriod: PolicyDocument?
    package var entitlement: PolicyDocument?

    package init(tenant: PolicyDocument? = nil, asset: PolicyDocument? = nil, keyPeriod: PolicyDocument? = nil, entitlement: PolicyDocument? = nil) {
        self.tenant = tenant
        self.asset = asset
        self.keyPeriod = keyPeriod
        self.entitlement = entitlement
    }

    /// The layers present, lowest precedence first.
    package var ordered: [(PolicyLayer, PolicyDocument)] {
        var out: [(PolicyLayer, PolicyDocument)] = []
        if let tenant { out.append((.tenant, tenant)) }
        if let asset { out.append((.asset, asset)) }
        if let keyPeriod { out.append((.keyPeriod, keyPeriod)) }
        if let entitlement { out.append((.entitlement, entitlement)) }
        return out
    }

    /// Stacks the layers over Apple's rules for the content type they name.
    ///
    /// The content type must come from some layer: it selects Apple's defaults, so that an explicit
    /// `security-level` or `hdcp` in any layer overrides them (a tenant can change Apple's rules) while
    /// a layer that only changes the content type gets that type's defaults.
    /// - Throws: ``PolicyDocumentError`` when no layer names a content type, or when the stacked
    ///   result is contradictory (the field named is the one that cannot hold).
    package func resolve() throws(PolicyDocumentError) -> EffectivePolicy {
        let layers = ordered
        guard let (typeLayer, type) = layers.last(where: { $0.1.contentType != nil }).flatMap({ l in l.1.contentType.map { (l.0, $0) } }) else {
            throw PolicyDocumentError(field: "content-type", reason: "is set by no layer (tenant, asset, key period or entitlement)")
        }
        var p = EffectivePolicy(defaultsFor: type)
        p.origins["content-type"] = typeLayer
        for (layer, d) in layers {
            func set<T>(_ value: T?, _ field: String, _ apply: (T) -> Void) {
                guard let value else { return }
                apply(value)
                p.origins[field] = layer
            }
            set(d.minimumSecurityLevel, "security-level") { p.minimumSecurityLevel = $0 }
            set(d.minimumKDLVersion, "kdl-minimum") { p.minimumKDLVersion = $0 }
            set(d.hdcp, "hdcp") { p.hdcp = $0 }
            set(d.airPlay, "airplay") { p.airPlay = $0 }
            set(d.avAdapter, "av-adapter") { p.avAdapter = $0 }
            set(d.virtualMachine, "virtual-machine") { p.virtualMachine = $0 }
            set(d.rental.notBefore, "rental.not-before") { p.rentalNotBefore = $0 }
            set(d.rental.notAfter, "rental.not-after") { p.rentalNotAfter = $0 }
            set(d.rental.durationSeconds, "rental.duration") { p.rentalDurationSeconds = $0 }
            set(d.lease.durationSeconds, "lease.duration") { p.leaseDurationSeconds = $0 }
            set(d.lease.renewalAllowed, "lease.renewal") { p.leaseRenewalAllowed = $0 }
            set(d.lease.requiresPlaybackState, "lease.requires-playback-state") { p.leaseRequiresPlaybackState = $0 }
            set(d.persistence, "persistence") { p.persistence = $0 }
            set(d.offline.enabled, "offline.enabled") { p.offlineEnabled = $0 }
            set(d.offline.storageSeconds, "offline.storage-duration") { p.offlineStorageSeconds = $0 }
            set(d.offline.playbackSeconds, "offline.playback-duration") { p.offlinePlaybackSeconds = $0 }
            set(d.deviceLimit, "device-limit") { p.deviceLimit = $0 }
            set(d.maxStreams, "max-streams") { p.maxStreams = $0 }
            set(d.whenFull, "when-full") { p.whenFull = $0 }
            set(d.entitlementRequired, "entitlement-required") { p.entitlementRequired = $0 }
        }
        try Self.validate(p)
        return p
    }

    /// Contradictions that only show once the layers are stacked.
    static func validate(_ p: EffectivePolicy) throws(PolicyDocumentError) {
        if p.rentalNotAfter <= p.rentalNotBefore {
            throw PolicyDocumentError(field: "rental.not-after", reason: "must be after rental.not-before once the layers are stacked")
        }
        if p.persistence == .limitedToRental, !p.hasRentalBound {
            throw PolicyDocumentError(field: "persistence", reason: "is rental-duration but neither rental.duration nor rental.not-after bounds it")
        }
        // Concurrent streams are counted through lease slots; a slot without a lease would never be freed.
        if case .maximum = p.maxStreams, p.leaseDurationSeconds == 0 {
            throw PolicyDocumentError(field: "max-streams", reason: "needs lease.duration above 0: streams are counted through lease slots")
        }
        if p.contentType == .audio, p.minimumSecurityLevel != .audio {
            // Guide, "Security Level Support": audio content must use the Audio security level.
            throw PolicyDocumentError(field: "security-level", reason: "must be audio for audio content")
        }
        if p.contentType != .audio, p.minimumSecurityLevel == .audio {
            // Guide: Baseline and Main are for video; an audio level would let any client take video keys.
            throw PolicyDocumentError(field: "security-level", reason: "cannot be audio for video content")
        }
    }
}
