import FairPlay
import KSMOperations
import KSMService
import KSMTestSupport
import Licensing
import Logging
import RedisStore
import Speke
import Testing
import Wire

/// `ksm admin import-cpix` and `export-cpix` on a real redis-server: every asset checked before a
/// write, a different stored key a conflict that writes nothing, the same file twice a no-op,
/// periods with times writing rotation schedules, and an export's keys exactly what is stored.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct CPIXKeyImporterTests {
    let tenant = try! StoreIdentifier("acme")
    let kekID = try! StoreIdentifier("kek-a")

    /// A fresh redis-server with tenant `acme` (KEK `kek-a`; a key seed when `seeded`).
    func withRedis(seeded: Bool = false, _ body: (RedisLicenseStore, PackagerKeyIssuer) async throws -> Void) async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let store = RedisLicenseStore(client: try RedisClient(configuration: server.configuration()))
        let keyring = KeyEncryptionKeyring()
        var kek = [UInt8](repeating: 0x5A, count: 32)
        try keyring.add(id: kekID, key: &kek)
        let seed = seeded ? try keyring.wrap(secret: Array(UInt8(0)...UInt8(31)), with: kekID) : nil
        try await store.putTenant(TenantRecord(id: tenant, keyEncryptionKeyID: kekID, keySeed: seed))
        var logger = Logger(label: "ksm.test")
        logger.logLevel = .critical
        try await body(store, PackagerKeyIssuer(store: store, keyring: keyring, logger: logger, clock: { 1_800_000_000_000 }))
    }

    /// A plain CPIX document giving `keys` (KID suffix digit, key byte) for content `movie`.
    func document(_ keys: [(kid: Int, byte: UInt8)]) throws -> CPIXKeyDocument {
        let entries = keys.map { key in
            """
            <ContentKey kid="00000000-0000-0000-0000-00000000000\(key.kid)" explicitIV="AAAAAAAAAAAAAAAAAAAAAA==">
              <Data><pskc:Secret><pskc:PlainValue>\(Base64.encode([UInt8](repeating: key.byte, count: 16)))</pskc:PlainValue></pskc:Secret></Data>
            </ContentKey>
            """
        }
        let text = """
            <CPIX xmlns="urn:dashif:org:cpix" xmlns:pskc="urn:ietf:params:xml:ns:keyprov:pskc" contentId="movie">
              <ContentKeyList>\(entries.joined())</ContentKeyList>
            </CPIX>
            """
        return try CPIXKeyDocument(bytes: Array(text.utf8), privateKey: nil)
    }

    func uri(_ kid: Int) -> String { "skd://movie/0000000000000000000000000000000\(kid)" }

    func storedKey(_ kid: Int, _ store: RedisLicenseStore, _ issuer: PackagerKeyIssuer) async throws -> [UInt8]? {
        let result = try await store.fetch([StoreRequest(tenant: tenant, account: PackagerKeyIssuer.readAccount, assetID: Array(uri(kid).utf8))])
        return try result.first?.contentKey.map { try issuer.keyring.unwrap($0) }
    }

    @Test func aDifferentStoredKeyIsAConflictAndNothingOfTheFileIsWritten() async throws {
        try await withRedis { store, issuer in
            let importer = CPIXKeyImporter(issuer: issuer)
            let first = try await importer.run(try document([(1, 0x11), (2, 0x22)]), options: .init(tenant: tenant))
            #expect(first.keys.map(\.action) == [.stored, .stored])
            #expect(first.keys.map(\.placement.uri) == [uri(1), uri(2)])

            let again = try await importer.run(try document([(1, 0x11), (2, 0x22)]), options: .init(tenant: tenant))
            #expect(again.keys.map(\.action) == [.unchanged, .unchanged])

            let conflicting = try document([(3, 0x33), (1, 0x99)])
            let error = try await #require(throws: CPIXFileError.self) { try await importer.run(conflicting, options: .init(tenant: tenant)) }
            #expect(error.code == .conflict)
            #expect(error.message.contains(uri(1)) && !error.message.contains(uri(3)), "\(error.message)")
            #expect(try await storedKey(3, store, issuer) == nil, "a key of a refused file was written")
            #expect(try await storedKey(1, store, issuer) == [UInt8](repeating: 0x11, count: 16))

            let replaced = try await importer.run(conflicting, options: .init(tenant: tenant, replace: true))
            #expect(replaced.keys.map(\.action) == [.stored, .replaced])
            #expect(try await storedKey(1, store, issuer) == [UInt8](repeating: 0x99, count: 16))
            #expect(try await storedKey(3, store, issuer) == [UInt8](repeating: 0x33, count: 16))
        }
    }

    @Test func withAKeySeedTheDerivedKeysAreUnchangedAndOnlyOthersStored() async throws {
        try await withRedis(seeded: true) { store, issuer in
            // The export derives its keys from the seed and stores nothing (no explicitIV asked).
            let exporter = CPIXExporter(store: store, keyring: issuer.keyring, logger: issuer.logger, clock: issuer.clock)
            let export = try await exporter.export(CPIXExportRequest(tenant: tenant, contentID: "movie", trackTypes: ["HD", "AUDIO"]))
            var exported = try CPIXKeyDocument(bytes: export.document, privateKey: nil)
            defer { exported.cleanse() }
            let outcome = try await CPIXKeyImporter(issuer: issuer).run(exported, options: .init(tenant: tenant))
            #expect(outcome.keys.map(\.action) == [.unchanged, .unchanged])
            for key in export.keys {
                let read = try await store.fetch([StoreRequest(tenant: tenant, account: PackagerKeyIssuer.readAccount, assetID: Array(key.uri.utf8))])
                #expect(read.first?.contentKey == nil, "\(key.uri): a key the seed derives was stored")
            }
            // A key the seed does not derive is stored, and then wins over the seed on the worker.
            let foreign = try await CPIXKeyImporter(issuer: issuer).run(try document([(1, 0x11)]), options: .init(tenant: tenant))
            #expect(foreign.keys.map(\.action) == [.stored])
            #expect(try await storedKey(1, store, issuer) == [UInt8](repeating: 0x11, count: 16))
        }
    }

    @Test func anUnknownTenantOrAMissingKEKIsRefusedBeforeAnyWrite() async throws {
        try await withRedis { store, issuer in
            let unknown = try await #require(throws: CPIXFileError.self) {
                try await CPIXKeyImporter(issuer: issuer).run(try document([(1, 1)]), options: .init(tenant: try StoreIdentifier("nobody")))
            }
            #expect(unknown.code == .unknownTenant)
            var without = issuer
            without.keyring = KeyEncryptionKeyring()
            let missing = try await #require(throws: CPIXFileError.self) {
                try await CPIXKeyImporter(issuer: without).run(try document([(1, 1)]), options: .init(tenant: tenant))
            }
            #expect(missing.code == .keyring)
            #expect(missing.message.contains("--kek kek-a=PATH"), "\(missing.message)")
            #expect(try await storedKey(1, store, issuer) == nil)
        }
    }

    @Test func exportedKeysAreTheStoredOnesAndPeriodsWithTimesWriteRotationSchedules() async throws {
        try await withRedis { store, issuer in
            let exporter = CPIXExporter(store: store, keyring: issuer.keyring, logger: issuer.logger, clock: issuer.clock)
            let request = CPIXExportRequest(
                tenant: tenant, contentID: "live-1",
                periods: [CPIXExportPeriod(index: 4, start: "2030-01-01T00:00:00Z"), CPIXExportPeriod(index: 5, start: "2030-01-01T00:10:00Z")],
                trackTypes: ["SD", "AUDIO"])
            let export = try await exporter.export(request)
            #expect(export.keys.count == 4)
            #expect(!export.isEncrypted)
            let second = try await exporter.export(request)
            var document = try CPIXKeyDocument(bytes: export.document, privateKey: nil)
            defer { document.cleanse() }
            #expect(try CPIXKeyDocument(bytes: second.document, privateKey: nil).keys.map(\.contentKey) == document.keys.map(\.contentKey))
            #expect(document.keys.map(\.skdURI) == export.keys.map { Optional($0.uri) })

            // The export issued (stored, the tenant having no seed) exactly the keys it wrote.
            let schedules = try await store.rotations(tenant: tenant)
            #expect(schedules.count == 2)
            let outcome = try await CPIXKeyImporter(issuer: issuer).run(document, options: .init(tenant: tenant))
            #expect(outcome.keys.allSatisfy { $0.action == .unchanged })
            #expect(outcome.schedulesWritten == 2)

            // The same keys imported into a fresh stream name: stored, policies set from the track
            // type, and the schedules the export's issuing wrote written again by the import.
            for schedule in schedules { try await store.removeRotation(tenant: tenant, assetID: schedule.assetID) }
            let imported = try await CPIXKeyImporter(issuer: issuer).run(document, options: .init(tenant: tenant))
            #expect(imported.schedulesWritten == 2)
            let rewritten = try await store.rotations(tenant: tenant)
            #expect(Set(rewritten.map(\.assetID)) == Set(schedules.map(\.assetID)))
            #expect(rewritten.allSatisfy { $0.boundaryMilliseconds == 1_893_456_600_000 })
            let sd = try await store.fetch([StoreRequest(tenant: tenant, account: PackagerKeyIssuer.readAccount, assetID: Array(export.keys[0].uri.utf8))])
            #expect(sd.first?.assetPolicy.map { String(decoding: $0, as: UTF8.self).contains("sd") } == true)
        }
    }
}
