import Licensing
import Testing

@testable import KSMService

/// The batch's policy cache: a document parsed once whatever array carries its bytes, and a stack of
/// stored documents resolved once per stream limit.
@Suite struct PolicyDocumentCacheTests {
    private static let tenant = Array(#"{"content-type": "hd", "lease": {"duration": 60}}"#.utf8)
    /// Same length as ``tenant``, other bytes: a storage-only key would mistake one for the other.
    private static let other = Array(#"{"content-type": "hd", "lease": {"duration": 90}}"#.utf8)

    /// The cache's answer for `bytes`, which must have one.
    private static func place(_ cache: inout PolicyDocumentCache, _ bytes: [UInt8]) throws -> (place: Int, result: Result<PolicyDocument, PolicyDocumentError>)
    {
        try #require(cache.document(bytes) as (place: Int, result: Result<PolicyDocument, PolicyDocumentError>)?)
    }

    /// The tenant document, parsed through the cache, and a job's stored layers naming it.
    private static func tenantLayer(_ cache: inout PolicyDocumentCache) throws -> (PolicyDocument, PolicyDocumentCache.StoredLayers) {
        let placed = try place(&cache, tenant)
        var stored = PolicyDocumentCache.StoredLayers()
        stored.tenant = placed.place
        return (try placed.result.get(), stored)
    }

    @Test("equal bytes in separate arrays share a place; same length, other bytes do not")
    func documentsArePlacedByContent() throws {
        var cache = PolicyDocumentCache()
        let a = try Self.place(&cache, Self.tenant)
        // A separate copy of the same bytes (new storage) and the very same array again.
        let copy = Array(Self.tenant.map { $0 })
        let b = try Self.place(&cache, copy)
        let again = try Self.place(&cache, Self.tenant)
        #expect(a.place == b.place && a.place == again.place)
        #expect(Self.other.count == Self.tenant.count)
        let c = try Self.place(&cache, Self.other)
        #expect(c.place != a.place)
        guard case .success(let first) = a.result, case .success(let second) = c.result else {
            Issue.record("documents did not parse")
            return
        }
        #expect(first.lease.durationSeconds == 60 && second.lease.durationSeconds == 90)
        #expect(cache.document(nil).map(\.place) == nil)
    }

    @Test("a stack resolves with the tenant record's stream limit under it, one result per limit")
    func stacksResolvePerStreamLimit() throws {
        var cache = PolicyDocumentCache()
        let (document, stored) = try Self.tenantLayer(&cache)
        let layers = PolicyLayers(tenant: document)
        let two = try cache.effectivePolicy(layers, stored: stored, tenantStreamLimit: 2).get()
        let five = try cache.effectivePolicy(layers, stored: stored, tenantStreamLimit: 5).get()
        #expect(two.maxStreams == .maximum(2) && five.maxStreams == .maximum(5))
        #expect(two.origins["max-streams"] == .tenant)
        #expect(try cache.effectivePolicy(layers, stored: stored, tenantStreamLimit: 2).get().maxStreams == .maximum(2))
    }

    @Test("a stack with a token's layer is resolved each time, never taken from the stored stack's result")
    func tokenStacksAreNotShared() throws {
        var cache = PolicyDocumentCache()
        let (document, stored) = try Self.tenantLayer(&cache)
        let plain = try cache.effectivePolicy(PolicyLayers(tenant: document), stored: stored, tenantStreamLimit: 2).get()
        let claim = try PolicyDocument(json: Array(#"{"max-streams": 7}"#.utf8))
        let token = try cache.effectivePolicy(PolicyLayers(tenant: document, entitlement: claim), stored: stored, tenantStreamLimit: 2).get()
        #expect(plain.maxStreams == .maximum(2))
        #expect(token.maxStreams == .maximum(7) && token.origins["max-streams"] == .entitlement)
    }
}
