import FairPlay
import FairPlayDevice
import Foundation
import KSMOperations
import KSMService
import KSMTestSupport
import Licensing
import RedisStore
import Speke
import Testing
import Wire

/// `ksm admin export-cpix` and `import-cpix` with the real binary over a real redis-server and the
/// demo tenant: an export holds the keys `ksm speke` answers for the same content, period and KID
/// (and a second export the same document), is written 0600 and valid CPIX 2.3, opens with the
/// recipient's private key when encrypted; an imported key is the one workers and SPEKE then find;
/// a conflicting import and a malformed or entity-laden file are refused with a clear message and
/// their exit status, writing nothing.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CPIXFileAdminTests {
    typealias Tenant = SpekeServiceTests.ProvisionedTenant

    /// The KIDs of AWS's FairPlay request (Fixtures/speke), period index 0.
    static let videoKID = "873f3740-2508-4a2d-94bc-9b0f86649251"
    static let audioKID = "0c54f2b0-b433-45a4-ae73-664438bb0b4e"

    static func ksm(_ arguments: [String], tenant: Tenant, input: [UInt8]? = nil) async throws -> KSMBinary.Result {
        try await KSMBinary.run(["admin"] + arguments + ["--redis-url", tenant.redis.url, "--kek", "demo-kek=\(tenant.kekPath)"], input: input)
    }

    static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    /// Checks `documents` against the DASH-IF CPIX 2.3 schema and with Unified Streaming's reader
    /// (``CPIXSchemaCheck``), which must read each without complaint.
    static func expectValidCPIX(_ documents: [(name: String, bytes: [UInt8])]) async throws {
        let reports = try await CPIXSchemaCheck.check(documents)
        for (name, _) in documents {
            let report = try #require(reports[name])
            #expect(report.problems.isEmpty, "\(name): \(report.problems)")
            #expect(report.read != nil, "\(name): the reader read nothing")
        }
    }

    @Test func anExportHoldsTheKeysKSMSpekeAnswersAndASecondExportTheSameDocument() async throws {
        let tenant = try await Tenant.start()
        defer { tenant.stop() }
        let out = tenant.directory.appendingPathComponent("test_case_1.cpix.xml").path
        let exported = try await Self.ksm(
            [
                "export-cpix", "--tenant", "demo", "--content-id", "test_case_1", "--period", "0", "--track", "VIDEO", "--track", "AUDIO", "--kid",
                Self.videoKID, "--kid", Self.audioKID, "--out", out,
            ], tenant: tenant)
        #expect(exported.status == 0, "\(Self.text(exported.stderr))")
        #expect(Self.text(exported.stdout).contains("exported skd://test_case_1/0/873f374025084a2d94bc9b0f86649251 kid \(Self.videoKID)"))
        #expect(Self.text(exported.stderr).contains("warning: the document holds the content keys in the clear"))
        let attributes = try FileManager.default.attributesOfItem(atPath: out)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let document = Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        let exportedKeys = try SpekeServiceTests.fairPlayKeys(document)
        #expect(exportedKeys.map(\.kid) == [Self.videoKID, Self.audioKID])
        // Nothing secret on the terminal: the report names URIs and KIDs only.
        for key in exportedKeys { #expect(!Self.text(exported.stdout + exported.stderr).contains(Base64.encode(key.key))) }
        try await Self.expectValidCPIX([("clear export", document)])

        let (speke, port) = try await SpekeServiceTests.startSpeke(redisURL: tenant.redis.url, kekPath: tenant.kekPath)
        defer { speke.kill() }
        let answer = try await HTTPExchange.post(
            "http://127.0.0.1:\(port)/speke/v2/demo/copyProtection", body: Array(SpekeServiceTests.fairPlayRequest.utf8),
            headers: ["Authorization": "Bearer \(tenant.token)", "X-Speke-Version": "2.0"])
        #expect(answer.status == 200, "\(answer.text)")
        #expect(try SpekeServiceTests.fairPlayKeys(answer.body) == exportedKeys, "ksm speke and export-cpix disagree")

        // Derived KIDs, document on standard output: the same bytes twice.
        let arguments = ["export-cpix", "--tenant", "demo", "--content-id", "vod-7", "--track", "SD", "--track", "HD", "--track", "AUDIO"]
        let first = try await Self.ksm(arguments, tenant: tenant)
        let second = try await Self.ksm(arguments, tenant: tenant)
        #expect(first.status == 0 && second.status == 0, "\(Self.text(first.stderr))")
        #expect(!first.stdout.isEmpty && first.stdout == second.stdout)
        let keys = try SpekeServiceTests.fairPlayKeys(first.stdout)
        #expect(keys.count == 3 && Set(keys.map(\.kid)).count == 3)
        #expect(keys.allSatisfy { $0.uri.hasPrefix("skd://vod-7/") && $0.uri.count == "skd://vod-7/".count + 32 }, "\(keys.map(\.uri))")
        #expect(Self.text(first.stderr).contains("exported 3 key(s) of vod-7 for tenant demo to standard output, in the clear"))
        try await Self.expectValidCPIX([("derived KIDs", first.stdout)])
    }

    @Test func anExportForARecipientCertificateOpensOnlyWithItsPrivateKey() async throws {
        let tenant = try await Tenant.start()
        defer { tenant.stop() }
        let recipient = try await TestRecipientCertificate.make()
        defer { recipient.remove() }
        // Periods by their times alone, as CPIX 2.3 readers that hold index and times exclusive want them.
        let periods = ["--period", "2030-01-01T00:00:00Z/2030-01-01T00:10:00Z", "--period", "2030-01-01T00:10:00Z/2030-01-01T00:20:00Z"]
        let encryptedPath = tenant.directory.appendingPathComponent("encrypted.xml").path
        let encrypted = try await Self.ksm(
            ["export-cpix", "--tenant", "demo", "--content-id", "live-3"] + periods + [
                "--recipient-certificate", recipient.certificatePEMPath, "--out", encryptedPath,
            ],
            tenant: tenant)
        #expect(encrypted.status == 0, "\(Self.text(encrypted.stderr))")
        #expect(!Self.text(encrypted.stderr).contains("warning"))
        #expect(
            Self.text(encrypted.stdout).contains("exported 4 key(s) of live-3 for tenant demo to \(encryptedPath), encrypted for the recipient certificate"))
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: encryptedPath)))
        #expect(!Self.text(bytes).contains("PlainValue"))

        let clear = try await Self.ksm(["export-cpix", "--tenant", "demo", "--content-id", "live-3"] + periods, tenant: tenant)
        #expect(clear.status == 0)
        let clearKeys = try CPIXKeyDocument(bytes: clear.stdout, privateKey: nil).keys
        let opened = try CPIXKeyDocument(bytes: bytes, privateKey: try RSAPrivateKey(pemOrDER: try recipient.privateKeyPEM())).keys
        #expect(opened.map(\.keyID) == clearKeys.map(\.keyID))
        #expect(opened.map(\.contentKey) == clearKeys.map(\.contentKey))
        #expect(opened.map(\.explicitIV) == clearKeys.map(\.explicitIV))
        #expect(opened.map(\.skdURI) == clearKeys.map(\.skdURI))
        let uris = opened.compactMap(\.skdURI)
        #expect(uris.count == 4 && uris.allSatisfy { $0.hasPrefix("skd://live-3/t1893456000000/") || $0.hasPrefix("skd://live-3/t1893456600000/") }, "\(uris)")
        try await Self.expectValidCPIX([("encrypted export", bytes), ("clear export with periods", clear.stdout)])

        // The periods' times wrote the rotation schedules, video and audio, first period to second.
        let rotations = try await KSMBinary.run(["admin", "rotations", "--redis-url", tenant.redis.url, "--tenant", "demo"])
        let listed = Self.text(rotations.stdout)
        #expect(listed.components(separatedBy: "skd://live-3/t1893456600000/").count - 1 == 2, "\(listed)")

        // Importing the encrypted file back needs the private key, and then changes nothing.
        let withoutKey = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", encryptedPath], tenant: tenant)
        #expect(withoutKey.status == 65)
        #expect(Self.text(withoutKey.stderr).contains("--private-key"))
        let imported = try await Self.ksm(
            ["import-cpix", "--tenant", "demo", "--file", encryptedPath, "--private-key", recipient.privateKeyPath], tenant: tenant)
        #expect(imported.status == 0, "\(Self.text(imported.stderr))")
        #expect(Self.text(imported.stdout).contains("imported 4 key(s) for tenant demo: 0 stored, 4 unchanged, 0 replaced"), "\(Self.text(imported.stdout))")
    }

    /// A CPIX answer with keys of our choosing, as another key provider would write it: content
    /// `imported-1`, two timed periods of SD and AUDIO.
    static func foreignDocument(byte: UInt8 = 0x40) throws -> (bytes: [UInt8], keys: [KID: IssuedKey]) {
        let request = CPIXExportRequest(
            tenant: try StoreIdentifier("demo"), contentID: "imported-1",
            periods: [CPIXExportPeriod(index: 1, start: "2031-01-01T00:00:00Z"), CPIXExportPeriod(index: 2, start: "2031-01-01T00:10:00Z")],
            trackTypes: ["SD", "AUDIO"])
        let speke = try request.spekeRequest()
        var keys: [KID: IssuedKey] = [:]
        for (offset, key) in speke.contentKeys.enumerated() {
            let period = speke.periods(for: key.kid).first?.index.map(String.init)
            keys[key.kid] = try IssuedKey(
                key: [UInt8](repeating: byte + UInt8(offset), count: 16), iv: [UInt8](repeating: 0xC0 + UInt8(offset), count: 16),
                skdURI: PackagerAssetID.uri(contentID: "imported-1", periodName: period, keyID: key.kid.bytes))
        }
        return (try SpekeResponseWriter.response(for: speke, keys: keys).body, keys)
    }

    /// The key and IV a worker finds for `uri`: read and unwrapped as the worker reads them.
    static func workerKey(_ uri: String, tenant: Tenant) async throws -> (key: [UInt8], iv: [UInt8])? {
        let store = RedisLicenseStore(client: try RedisClient(configuration: tenant.redis.configuration()))
        let keyring = try KeyFile.keyring(files: ["demo-kek": tenant.kekPath])
        let results = try await store.fetch([
            StoreRequest(tenant: try StoreIdentifier("demo"), account: try StoreIdentifier("viewer"), assetID: Array(uri.utf8))
        ])
        guard let wrapped = results.first?.contentKey else { return nil }
        return (try keyring.unwrap(wrapped), wrapped.iv)
    }

    @Test func anImportedKeyIsTheOneWorkersAndSPEKEThenServe() async throws {
        let tenant = try await Tenant.start()
        defer { tenant.stop() }
        let (bytes, keys) = try Self.foreignDocument()
        let path = tenant.directory.appendingPathComponent("foreign.xml").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let imported = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", path], tenant: tenant)
        #expect(imported.status == 0, "\(Self.text(imported.stderr))")
        let printed = Self.text(imported.stdout)
        for (kid, key) in keys {
            #expect(printed.contains("stored \(key.skdURI) kid \(kid)"), "\(printed)")
            #expect(!printed.contains(Base64.encode(key.key)) && !printed.contains(key.key.hexString))
            let found = try #require(try await Self.workerKey(key.skdURI, tenant: tenant), "\(key.skdURI) not found")
            #expect(found.key == key.key && found.iv == key.iv, "\(key.skdURI)")
        }
        #expect(printed.contains("imported 4 key(s) for tenant demo: 4 stored, 0 unchanged, 0 replaced; 2 rotation schedule(s) written"), "\(printed)")

        // SPEKE's path (here through export-cpix) finds the imported keys for the same KIDs.
        let kids = try CPIXKeyDocument(bytes: bytes, privateKey: nil).keys.map { $0.keyID.description }
        let again = try await Self.ksm(
            ["export-cpix", "--tenant", "demo", "--content-id", "imported-1", "--period", "1", "--period", "2", "--track", "SD", "--track", "AUDIO"]
                + kids.flatMap { ["--kid", $0] }, tenant: tenant)
        #expect(again.status == 0, "\(Self.text(again.stderr))")
        for key in try SpekeServiceTests.fairPlayKeys(again.stdout) {
            let kid = try #require(KID(uuid: key.kid))
            let expected = try #require(keys[kid])
            #expect(key.key == expected.key && key.iv == expected.iv && key.uri == expected.skdURI)
        }
        // From standard input, a second time: nothing changes.
        let twice = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", "-"], tenant: tenant, input: bytes)
        #expect(twice.status == 0, "\(Self.text(twice.stderr))")
        #expect(Self.text(twice.stdout).contains("0 stored, 4 unchanged, 0 replaced"))
    }

    @Test func aDeviceGetsTheImportedKeyInTheCKCKSMServeBuilds() async throws {
        let fleet = try await Fleet(streams: 1, periods: 1)
        let (bytes, keys) = try Self.foreignDocument(byte: 0x50)
        let path = fleet.directory.appendingPathComponent("foreign.xml").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let imported = try await KSMBinary.run(
            [
                "admin", "import-cpix", "--redis-url", fleet.redisURL, "--kek", "\(fleet.catalog.keyEncryptionKeyID)=\(fleet.kekPath)", "--tenant",
                fleet.catalog.tenant, "--file", path,
            ])
        #expect(imported.status == 0, "\(Self.text(imported.stderr))")

        try await fleet.startWorker()
        let client = try await FleetClient(fleet: fleet)
        let device = SimulatedDevice(trust: client.trust)
        for (index, key) in keys.values.sorted(by: { $0.skdURI < $1.skdURI }).enumerated() {
            var options = SPCOptions()
            options.assetID = Array(key.skdURI.utf8)
            options.playback = MediaPlaybackInfo(creationDate: UInt32(Date().timeIntervalSince1970), state: .readyToPlay, sessionID: UInt64(index + 1))
            let (spc, session) = try device.makeSPC(options)
            let id = "cpix-\(index)"
            // An account per key: the demo policy allows two concurrent streams per account.
            let account = "imported-\(index)"
            let job = LicenseJob(
                id: try StoreIdentifier(id), tenant: try StoreIdentifier(fleet.catalog.tenant), account: try StoreIdentifier(account), spc: spc)
            try await client.sendRaw(job.jsonBytes(), key: account, headers: [("correlation-id", Array(id.utf8))])
            let reply = try await client.reply(id)
            #expect(reply.status == .ok, "\(key.skdURI): \(reply.reason)")
            let opened = try CKCOpener.open(try #require(reply.ckc), session: session)
            #expect(opened.contentKey == key.key, "\(key.skdURI)")
            #expect(opened.contentIV == key.iv, "\(key.skdURI)")
        }
        await client.close()
    }

    @Test func aConflictingImportIsRefusedNamingTheAssetAndWritesNothing() async throws {
        let tenant = try await Tenant.start()
        defer { tenant.stop() }
        let (original, originalKeys) = try Self.foreignDocument(byte: 0x10)
        let originalPath = tenant.directory.appendingPathComponent("original.xml").path
        try Data(original).write(to: URL(fileURLWithPath: originalPath))
        // Only the first period's keys go in first, so the second file has new keys beside the conflicting ones.
        let firstPeriod = try Self.onlyFirstPeriod(original)
        let firstPath = tenant.directory.appendingPathComponent("first.xml").path
        try Data(firstPeriod).write(to: URL(fileURLWithPath: firstPath))
        let stored = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", firstPath], tenant: tenant)
        #expect(stored.status == 0, "\(Self.text(stored.stderr))")

        let (changed, changedKeys) = try Self.foreignDocument(byte: 0x70)
        let changedPath = tenant.directory.appendingPathComponent("changed.xml").path
        try Data(changed).write(to: URL(fileURLWithPath: changedPath))
        let refused = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", changedPath], tenant: tenant)
        #expect(refused.status == 1)
        let message = Self.text(refused.stderr)
        #expect(message.hasPrefix("ksm admin import-cpix: error: 2 asset(s) already hold a different key: skd://imported-1/1/"), "\(message)")
        #expect(message.contains("Nothing was written"))
        #expect(refused.stdout.isEmpty)
        for (_, key) in changedKeys {
            let found = try await Self.workerKey(key.skdURI, tenant: tenant)
            if key.skdURI.hasPrefix("skd://imported-1/1/") {
                let kept = try #require(originalKeys.values.first { $0.skdURI == key.skdURI })
                #expect(found?.key == kept.key, "the stored key of \(key.skdURI) changed")
            } else {
                #expect(found == nil, "\(key.skdURI) was written by a refused import")
            }
        }
        let rotations = try await KSMBinary.run(["admin", "rotations", "--redis-url", tenant.redis.url, "--tenant", "demo"])
        #expect(!Self.text(rotations.stdout).contains("imported-1/2/"), "a refused import recorded its periods")

        let replaced = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", changedPath, "--replace"], tenant: tenant)
        #expect(replaced.status == 0, "\(Self.text(replaced.stderr))")
        #expect(Self.text(replaced.stdout).contains("2 stored, 0 unchanged, 2 replaced"))
        for (_, key) in changedKeys { #expect(try await Self.workerKey(key.skdURI, tenant: tenant)?.key == key.key) }
    }

    /// `document` with the keys of its second period removed (keys, DRM systems and rules).
    static func onlyFirstPeriod(_ document: [UInt8]) throws -> [UInt8] {
        var root = try SafeXMLReader.read(document)
        let second = Set(
            root.elements(CPIXNamespace.cpix, "ContentKeyUsageRuleList").flatMap { $0.children }.filter {
                $0.elements(CPIXNamespace.cpix, "KeyPeriodFilter").first?[attribute: "periodId"] == "keyPeriod_2"
            }.compactMap { $0[attribute: "kid"] })
        for index in root.children.indices {
            root.children[index].children.removeAll { second.contains($0[attribute: "kid"] ?? "") }
        }
        return XMLWriter.document(root)
    }

    @Test func malformedAndEntityLadenFilesAreRefusedWithExitStatus65() async throws {
        let tenant = try await Tenant.start()
        defer { tenant.stop() }
        let cases: [(String, String)] = [
            (
                #"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;&a;">]><cpix:CPIX xmlns:cpix="urn:dashif:org:cpix">&b;</cpix:CPIX>"#,
                "a document type declaration (<!DOCTYPE) is not accepted"
            ),
            (#"<cpix:CPIX xmlns:cpix="urn:dashif:org:cpix"><cpix:ContentKeyList>"#, "not well-formed XML"),
            (SpekeServiceTests.fairPlayRequest, "holds no key (no cpix:Data/pskc:Secret): the file is a request, not an answer"),
            ("", "the document is empty"),
        ]
        for (document, reason) in cases {
            let path = tenant.directory.appendingPathComponent("bad.xml").path
            try Data(document.utf8).write(to: URL(fileURLWithPath: path))
            let refused = try await Self.ksm(["import-cpix", "--tenant", "demo", "--file", path], tenant: tenant)
            #expect(refused.status == 65, "\(reason): \(Self.text(refused.stderr))")
            #expect(Self.text(refused.stderr).contains(reason), "\(Self.text(refused.stderr))")
            #expect(refused.stdout.isEmpty)
        }
        let badTrack = try await Self.ksm(["export-cpix", "--tenant", "demo", "--content-id", "c", "--track", "4K"], tenant: tenant)
        #expect(badTrack.status == 64)
        #expect(Self.text(badTrack.stderr).contains("Track type 4K is not one of"), "\(Self.text(badTrack.stderr))")
        let badPeriod = try await Self.ksm(["export-cpix", "--tenant", "demo", "--content-id", "c", "--period", "x"], tenant: tenant)
        #expect(badPeriod.status == 64)
        let unknownTenant = try await Self.ksm(["export-cpix", "--tenant", "nobody", "--content-id", "c"], tenant: tenant)
        #expect(unknownTenant.status == 1)
        #expect(Self.text(unknownTenant.stderr).contains("Unknown tenant"), "\(Self.text(unknownTenant.stderr))")
    }
}
