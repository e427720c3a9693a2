import FairPlay
import Foundation
import Licensing
import Testing
import Wire

@Suite("Policy documents")
struct PolicyDocumentTests {
    @Test("reads every field of a full document and writes it back to the same document")
    func fullDocumentRoundTrip() throws {
        let json = """
            {"content-type": "uhd", "security-level": "main", "kdl-minimum": 32, "hdcp": "type1",
             "airplay": "cap-baseline", "av-adapter": "deny", "virtual-machine": "cap-audio",
             "rental": {"not-before": 1000, "not-after": 2000, "duration": 3600},
             "lease": {"duration": 90, "renewal": false}, "persistence": "rental-duration",
             "offline": {"enabled": true, "storage-duration": 10, "playback-duration": 20},
             "device-limit": 4, "max-streams": "unlimited", "when-full": "end-oldest", "entitlement-required": true}
            """
        let d = try PolicyDocument(json: Array(json.utf8))
        #expect(d.contentType == .uhd)
        #expect(d.minimumSecurityLevel == .main)
        #expect(d.minimumKDLVersion == 32)
        #expect(d.hdcp == .type1)
        #expect(d.airPlay == .cap(.baseline))
        #expect(d.avAdapter == .deny)
        #expect(d.virtualMachine == .cap(.audio))
        #expect(d.rental == .init(notBefore: 1000, notAfter: 2000, durationSeconds: 3600))
        #expect(d.lease == .init(durationSeconds: 90, renewalAllowed: false))
        #expect(d.persistence == .limitedToRental)
        #expect(d.offline == .init(enabled: true, storageSeconds: 10, playbackSeconds: 20))
        #expect(d.deviceLimit == .maximum(4))
        #expect(d.maxStreams == .unlimited)
        #expect(d.whenFull == .endOldest)
        #expect(d.entitlementRequired == true)
        let again = try PolicyDocument(json: d.jsonBytes())
        #expect(again == d)
        #expect(try JSONValue(parsing: d.jsonBytes()) == JSONValue(parsing: Array(json.utf8)))
    }

    @Test("an empty document is a layer that says nothing, and writes back as {}")
    func emptyLayer() throws {
        let d = try PolicyDocument(json: Array("{}".utf8))
        #expect(d == PolicyDocument())
        #expect(String(decoding: d.jsonBytes(), as: UTF8.self) == "{}")
    }

    @Test("reads the first schema's legacy hdcp-type and lease-duration, writes the new names")
    func legacyFields() throws {
        let d = try PolicyDocument(json: Array(#"{"content-type": "hd", "hdcp-type": -1, "lease-duration": 300}"#.utf8))
        #expect(d.hdcp == .notRequired)
        #expect(d.lease.durationSeconds == 300)
        #expect(String(decoding: d.jsonBytes(), as: UTF8.self) == #"{"content-type":"hd","hdcp":"none","lease":{"duration":300}}"#)
    }

    @Test(
        "refuses a bad field naming it, without quoting its value",
        arguments: [
            (#"[]"#, ""),
            (#"{"content-type": "4k"}"#, "content-type"),
            (#"{"security-level": "gold"}"#, "security-level"),
            (#"{"kdl-minimum": -1}"#, "kdl-minimum"),
            (#"{"hdcp": 1}"#, "hdcp"),
            (#"{"hdcp": "type0", "hdcp-type": 0}"#, "hdcp-type"),
            (#"{"hdcp-type": 2}"#, "hdcp-type"),
            (#"{"airplay": "maybe"}"#, "airplay"),
            (#"{"av-adapter": true}"#, "av-adapter"),
            (#"{"virtual-machine": "baseline"}"#, "virtual-machine"),
            (#"{"rental": 5}"#, "rental"),
            (#"{"rental": {"not-before": "soon"}}"#, "rental.not-before"),
            (#"{"rental": {"not-after": 1.5}}"#, "rental.not-after"),
            (#"{"rental": {"not-before": 10, "not-after": 10}}"#, "rental.not-after"),
            (#"{"rental": {"duration": 4294967296}}"#, "rental.duration"),
            (#"{"lease": {"duration": -5}}"#, "lease.duration"),
            (#"{"lease": {"renewal": "yes"}}"#, "lease.renewal"),
            (#"{"lease": {"duration": 5}, "lease-duration": 5}"#, "lease-duration"),
            (#"{"persistence": "forever"}"#, "persistence"),
            (#"{"offline": {"enabled": 1}}"#, "offline.enabled"),
            (#"{"offline": {"storage-duration": "30d"}}"#, "offline.storage-duration"),
            (#"{"offline": {"playback-duration": -1}}"#, "offline.playback-duration"),
            (#"{"device-limit": 0}"#, "device-limit"),
            (#"{"max-streams": "many"}"#, "max-streams"),
            (#"{"when-full": "kick"}"#, "when-full"),
            (#"{"entitlement-required": "secret-value"}"#, "entitlement-required"),
        ])
    func refusesBadField(json: String, field: String) {
        do {
            _ = try PolicyDocument(json: Array(json.utf8))
            Issue.record("accepted \(json)")
        } catch {
            #expect(error.field == field)
            #expect(!error.description.contains("secret-value"))
            #expect(!error.description.contains("4k"))
        }
    }

    @Test("refuses what is not JSON, and a document over 64 KiB")
    func refusesNonJSON() {
        #expect(throws: PolicyDocumentError.self) { try PolicyDocument(json: Array("{".utf8)) }
        let big = "{\"x\": \"" + String(repeating: "a", count: 70_000) + "\"}"
        #expect(throws: PolicyDocumentError.self) { try PolicyDocument(json: Array(big.utf8)) }
    }

    @Test("null means no opinion and unknown fields are ignored")
    func nullAndUnknown() throws {
        let d = try PolicyDocument(json: Array(#"{"content-type": null, "future-field": {"x": 1}}"#.utf8))
        #expect(d == PolicyDocument())
    }

    @Test(
        "the example policies parse and resolve",
        arguments: [
            "live-event-lease-2-streams.json", "rental-48-hours.json", "offline-30-day-storage-24-hour-playback.json", "uhd-main-hdcp-type1.json",
        ])
    func examplesParse(file: String) throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/Examples/policies/" + file))
        let document = try PolicyDocument(json: Array(data))
        let resolved = try PolicyLayers(tenant: document).resolve()
        #expect(resolved.origins["content-type"] == .tenant)
    }

    @Test("the example policies say what their names promise")
    func examplesMeanWhatTheySay() throws {
        func load(_ name: String) throws -> EffectivePolicy {
            let data = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/Examples/policies/" + name))
            return try PolicyLayers(tenant: PolicyDocument(json: Array(data))).resolve()
        }
        let live = try load("live-event-lease-2-streams.json")
        #expect(live.leaseDurationSeconds > 0 && live.maxStreams == .maximum(2) && live.rentalNotAfter != .max)
        let rental = try load("rental-48-hours.json")
        #expect(rental.rentalDurationSeconds == 48 * 3600 && rental.persistence == .limitedToRental)
        let offline = try load("offline-30-day-storage-24-hour-playback.json")
        #expect(offline.offlineEnabled && offline.offlineStorageSeconds == 30 * 86400 && offline.offlinePlaybackSeconds == 86400)
        let uhd = try load("uhd-main-hdcp-type1.json")
        #expect(uhd.minimumSecurityLevel == .main && uhd.hdcp == .type1)
    }

    @Test("the policy schema is JSON and describes every field the parser reads")
    func schemaCoversFields() throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/schemas/policy.schema.json"))
        guard case .object(let schema) = try JSONValue(parsing: Array(data)), case .object(let props)? = schema["properties"] else {
            Issue.record("schema has no properties")
            return
        }
        for key in [
            "content-type", "security-level", "kdl-minimum", "hdcp", "hdcp-type", "airplay", "av-adapter", "virtual-machine", "rental", "lease",
            "lease-duration", "persistence", "offline", "device-limit", "max-streams", "when-full", "entitlement-required",
        ] {
            #expect(props[key] != nil, "schema lacks \(key)")
        }
    }
}
