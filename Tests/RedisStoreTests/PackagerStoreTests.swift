import KSMTestSupport
import Licensing
import Testing

@testable import RedisStore

/// A key provider's writes through a real redis-server (and the shared cluster): set-if-absent
/// keys and policies, the period log, packager credentials, and the scripts' headers.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PackagerStoreTests {
    static func id(_ text: String) -> StoreIdentifier {
        // Test literals are valid by construction.
        try! StoreIdentifier(text)
    }
    static let asset = Array("skd://live-1/7/00112233445566778899aabbccddeeff".utf8)

    static func wrapped(_ byte: UInt8) -> WrappedContentKey {
        WrappedContentKey(wrappedKey: [UInt8](repeating: byte, count: 24), iv: [UInt8](repeating: byte &+ 1, count: 16), keyEncryptionKeyID: id("kek-a"))
    }

    @Test("the scripts' headers name their KEYS and ARGV in the order the call structs write them")
    func scriptHeaders() {
        let claim = ContentKeyClaimScriptCall(ContentKeyClaim(tenant: Self.id("acme"), assetID: Self.asset, candidate: Self.wrapped(1), policy: [1]))
        let log = PeriodLogScriptCall(logKey: "k", order: 1, member: "m", keep: 8, ttlMilliseconds: 1)
        for call in [claim, log] as [any RedisScriptCall] {
            let type = type(of: call)
            let header = RedisScriptCallTests.Header(type.script.source)
            let written = call.encodedNames
            #expect(header.problems == [])
            #expect(written.outOfOrder == [])
            #expect(header.keys == written.keys && header.arguments == written.arguments)
            #expect(written.keys.count == type.keyCount)
        }
        #expect(
            HashSlot.of(claim.contentKeyKey.bytes) == HashSlot.of(claim.policyKey.bytes)
                && HashSlot.of(claim.policyKey.bytes) == HashSlot.of(RedisKeys.periodLog(Self.id("acme"), contentID: [1], trackType: [2]).bytes),
            "one script, one slot: the tenant's")
    }

    @Test("the first claim stores its key and policy; later claims read the winner back and write nothing", arguments: RedisBackend.allCases)
    func firstClaimWins(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let tenant = Self.id("acme")
            let policy = Array(#"{"content-type":"hd"}"#.utf8)
            let first = ContentKeyClaim(tenant: tenant, assetID: Self.asset, candidate: Self.wrapped(1), policy: policy)
            let second = ContentKeyClaim(tenant: tenant, assetID: Self.asset, candidate: Self.wrapped(2), policy: Array(#"{"content-type":"uhd"}"#.utf8))
            let readOnly = ContentKeyClaim(tenant: tenant, assetID: Self.asset, candidate: nil, policy: nil)
            #expect(try await store.claimContentKeys([first, second, readOnly]) == [Self.wrapped(1), Self.wrapped(1), Self.wrapped(1)])
            try await store.putTenant(TenantRecord(id: tenant, keyEncryptionKeyID: Self.id("kek-a")))
            let read = try await store.fetch([StoreRequest(tenant: tenant, account: Self.id("a"), assetID: Self.asset)])
            #expect(read.first?.contentKey == Self.wrapped(1), "the worker's read finds it with no key period")
            #expect(read.first?.assetPolicy == policy, "the first policy stays")

            let other = Array("skd://other".utf8)
            let none = ContentKeyClaim(tenant: tenant, assetID: other, candidate: nil, policy: policy)
            #expect(try await store.claimContentKeys([none]) == [nil], "no candidate, nothing stored")
            let otherRead = try await store.fetch([StoreRequest(tenant: tenant, account: Self.id("a"), assetID: other)])
            #expect(otherRead.first?.contentKey == nil && otherRead.first?.assetPolicy == policy)
        }
    }

    @Test("eight claimants racing on one asset all get the one key stored")
    func racingClaimsAgree() async throws {
        let server = try await RedisServerProcess()
        defer { server.stop() }
        let configuration = server.configuration()
        let winners = try await withThrowingTaskGroup(of: WrappedContentKey?.self) { group in
            for n in 1...8 {
                group.addTask {
                    // Each its own client, as separate provider instances have.
                    let store = RedisLicenseStore(client: try RedisClient(configuration: configuration))
                    let claim = ContentKeyClaim(tenant: Self.id("acme"), assetID: Self.asset, candidate: Self.wrapped(UInt8(n)), policy: nil)
                    return try await store.claimContentKeys([claim]).first ?? nil
                }
            }
            var all: [WrappedContentKey?] = []
            for try await winner in group { all.append(winner) }
            return all
        }
        #expect(winners.count == 8 && Set(winners).count == 1 && winners[0] != nil)
    }

    @Test("the period log replaces an entry of the same order, keeps the newest eight, and says when it changed", arguments: RedisBackend.allCases)
    func periodLog(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let (tenant, content, track) = (Self.id("acme"), Array("live-1".utf8), Array("HD".utf8))
            func entry(_ order: Int64, start: Int64? = nil) -> PackagerPeriodEntry {
                PackagerPeriodEntry(order: order, startMilliseconds: start, endMilliseconds: start.map { $0 + 10 }, assetID: Array("skd://x/\(order)".utf8))
            }
            let first = try await store.recordPeriod(entry(5, start: 100), tenant: tenant, contentID: content, trackType: track)
            #expect(first.changed && first.log == [entry(5, start: 100)])
            let again = try await store.recordPeriod(entry(5, start: 100), tenant: tenant, contentID: content, trackType: track)
            #expect(!again.changed && again.log == [entry(5, start: 100)])
            let moved = try await store.recordPeriod(entry(5, start: 200), tenant: tenant, contentID: content, trackType: track)
            #expect(moved.changed && moved.log == [entry(5, start: 200)])
            for order in Int64(6)...15 { _ = try await store.recordPeriod(entry(order), tenant: tenant, contentID: content, trackType: track) }
            let last = try await store.recordPeriod(entry(16), tenant: tenant, contentID: content, trackType: track)
            #expect(last.log.map(\.order) == Array(Int64(9)...16))
            let otherTrack = try await store.recordPeriod(entry(1), tenant: tenant, contentID: content, trackType: Array("AUDIO".utf8))
            #expect(otherTrack.log.map(\.order) == [1], "each track its own log")
        }
    }

    @Test("credentials: stored as hashes by ID, replaced by ID, revoked one at a time or all", arguments: RedisBackend.allCases)
    func credentials(backend: RedisBackend) async throws {
        try await backend.withStore { store in
            let tenant = Self.id("acme")
            let a = PackagerCredential(id: Self.id("pk-a"), tokenHash: [UInt8](repeating: 1, count: 32), createdAtMilliseconds: 1)
            let b = PackagerCredential(id: Self.id("pk-b"), tokenHash: [UInt8](repeating: 2, count: 32), createdAtMilliseconds: 2)
            #expect(try await store.packagerCredentials(tenant: tenant) == [])
            try await store.putPackagerCredential(b, tenant: tenant)
            try await store.putPackagerCredential(a, tenant: tenant)
            #expect(try await store.packagerCredentials(tenant: tenant) == [a, b])
            #expect(try await store.packagerCredentials(tenant: Self.id("globex")) == [], "per tenant")
            var replaced = a
            replaced.tokenHash = [UInt8](repeating: 3, count: 32)
            try await store.putPackagerCredential(replaced, tenant: tenant)
            #expect(try await store.packagerCredentials(tenant: tenant) == [replaced, b])
            #expect(try await store.removePackagerCredentials(tenant: tenant, id: Self.id("pk-x")) == 0)
            #expect(try await store.removePackagerCredentials(tenant: tenant, id: Self.id("pk-a")) == 1)
            #expect(try await store.packagerCredentials(tenant: tenant) == [b])
            try await store.putPackagerCredential(a, tenant: tenant)
            #expect(try await store.removePackagerCredentials(tenant: tenant, id: nil) == 2)
            #expect(try await store.packagerCredentials(tenant: tenant) == [])
        }
    }

    @Test("a period log member round-trips, and a malformed one is refused")
    func memberEncoding() {
        let entry = PackagerPeriodEntry(order: 42, startMilliseconds: 1_700_000_000_000, endMilliseconds: nil, assetID: [0xAB, 0x01])
        #expect(entry.redisMember == "42|1700000000000|-|ab01")
        #expect(PackagerPeriodEntry(redisMember: Array(entry.redisMember.utf8)) == entry)
        for bad in ["42|-|-", "x|-|-|ab", "1|-|-|", "1|-5|-|ab", "1|-|-|zz"] {
            #expect(PackagerPeriodEntry(redisMember: Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
