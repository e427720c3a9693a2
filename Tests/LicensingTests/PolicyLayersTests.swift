import FairPlay
import Licensing
import Testing

@Suite("Policy layering")
struct PolicyLayersTests {
    func doc(_ json: String) throws -> PolicyDocument { try PolicyDocument(json: Array(json.utf8)) }

    @Test(
        "Apple's rules per content type are the base",
        arguments: [
            (ContentType.sd, SecurityLevel.baseline, HDCPRequirement.type0),
            (.hd, .baseline, .type0),
            (.uhd, .main, .type1),
            (.audio, .audio, .type0),
        ])
    func appleDefaults(type: ContentType, level: SecurityLevel, hdcp: HDCPRequirement) throws {
        let p = try PolicyLayers(tenant: PolicyDocument(contentType: type)).resolve()
        #expect(p.minimumSecurityLevel == level)
        #expect(p.hdcp == hdcp)
        #expect(p.minimumKDLVersion == 31)
        #expect(p.origins["hdcp"] == .appleDefault)
        #expect(p.airPlay == .allow && p.virtualMachine == .allow && p.persistence == .none && !p.offlineEnabled)
        #expect(p.maxStreams == .unlimited && p.whenFull == .refuseNew && !p.entitlementRequired && p.leaseRenewalAllowed)
    }

    @Test("each higher layer wins field by field: tenant < asset < key period < entitlement")
    func precedence() throws {
        let layers = PolicyLayers(
            tenant: try doc(#"{"content-type": "hd", "lease": {"duration": 600, "renewal": true}, "rental": {"duration": 100}, "airplay": "deny"}"#),
            asset: try doc(#"{"lease": {"duration": 300}, "rental": {"not-after": 9000000000000}}"#),
            keyPeriod: try doc(#"{"lease": {"duration": 60}}"#),
            entitlement: try doc(#"{"airplay": "allow", "rental": {"duration": 50}}"#))
        let p = try layers.resolve()
        #expect(p.leaseDurationSeconds == 60)
        #expect(p.origins["lease.duration"] == .keyPeriod)
        #expect(p.leaseRenewalAllowed == true)
        #expect(p.origins["lease.renewal"] == .tenant)
        #expect(p.rentalNotAfter == 9_000_000_000_000)
        #expect(p.origins["rental.not-after"] == .asset)
        #expect(p.rentalDurationSeconds == 50)
        #expect(p.airPlay == .allow)
        #expect(p.origins["airplay"] == .entitlement)
    }

    @Test("a higher layer that changes the content type brings that type's Apple defaults, while an explicit level anywhere still overrides them")
    func contentTypeSwitch() throws {
        let p = try PolicyLayers(tenant: try doc(#"{"content-type": "sd"}"#), asset: try doc(#"{"content-type": "uhd"}"#)).resolve()
        #expect(p.contentType == .uhd && p.minimumSecurityLevel == .main && p.hdcp == .type1)
        let q = try PolicyLayers(tenant: try doc(#"{"hdcp": "none", "security-level": "baseline"}"#), asset: try doc(#"{"content-type": "uhd"}"#)).resolve()
        #expect(q.hdcp == .notRequired && q.minimumSecurityLevel == .baseline)
        #expect(q.origins["hdcp"] == .tenant)
    }

    @Test(
        "refuses stacked contradictions, naming the field",
        arguments: [
            (#"{"hdcp": "none"}"#, nil as String?, "content-type"),
            (#"{"content-type": "hd", "rental": {"not-before": 5000}}"#, #"{"rental": {"not-after": 4000}}"#, "rental.not-after"),
            (#"{"content-type": "hd", "persistence": "rental-duration"}"#, nil, "persistence"),
            (#"{"content-type": "hd", "max-streams": 2}"#, nil, "max-streams"),
            (#"{"content-type": "audio", "security-level": "main"}"#, nil, "security-level"),
            (#"{"content-type": "hd", "security-level": "audio"}"#, nil, "security-level"),
        ])
    func contradictions(tenant: String, asset: String?, field: String) throws {
        let layers = PolicyLayers(tenant: try doc(tenant), asset: try asset.map(doc))
        #expect(throws: PolicyDocumentError.self) { try layers.resolve() }
        do { _ = try layers.resolve() } catch { #expect(error.field == field) }
    }

    @Test("a lower layer's max-streams is fine once a higher layer adds the lease")
    func crossLayerValidation() throws {
        let p = try PolicyLayers(tenant: try doc(#"{"content-type": "hd", "max-streams": 2}"#), asset: try doc(#"{"lease": {"duration": 60}}"#)).resolve()
        #expect(p.maxStreams == .maximum(2))
    }
}
