import Licensing

/// Policy documents parsed once per batch, and the policy they stack to resolved once per batch:
/// most jobs of a batch share the tenant's default and a few asset documents, and parsing and
/// stacking are the costly part of policy.
struct PolicyDocumentCache {
    /// What one stack of stored layers resolves from: the documents (their places in ``parsed``,
    /// -1 for an absent layer) and the tenant record's stream limit, which sits under them.
    private struct StackKey: Hashable {
        var tenant: Int
        var asset: Int
        var keyPeriod: Int
        var tenantStreamLimit: Int
    }

    /// Where a byte array's storage starts, and how long it is: equal for two arrays only when they
    /// share storage while one of them is held (a held buffer cannot be reused), so equal bytes.
    private struct Storage: Hashable {
        var address: UInt
        var count: Int
        init(_ bytes: [UInt8]) {
            address = bytes.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
            count = bytes.count
        }
    }

    /// Each distinct document of the batch, parsed; its place here names it in a stack's key.
    private var parsed: [Result<PolicyDocument, PolicyDocumentError>] = []
    private var byBytes: [[UInt8]: Int] = [:]
    private var byStorage: [Storage: Int] = [:]
    /// Arrays whose storage ``byStorage`` names besides ``byBytes``' keys: held so that storage
    /// cannot be freed and reused for other bytes while the cache lives.
    private var held: [[UInt8]] = []
    private var stacks: [StackKey: Result<EffectivePolicy, PolicyDocumentError>] = [:]

    /// The stored layers of one job, each a place in the cache (-1: absent).
    struct StoredLayers {
        var tenant = -1, asset = -1, keyPeriod = -1
    }

    /// The document, or the error naming the field, with its place; nil bytes give nil.
    ///
    /// A store result's documents usually share their storage with the cached read they came from,
    /// so storage is looked up before the bytes are hashed (every storage known is held, so it is
    /// still those bytes).
    mutating func document(_ bytes: [UInt8]?) -> (place: Int, result: Result<PolicyDocument, PolicyDocumentError>)? {
        guard let bytes else { return nil }
        let storage = Storage(bytes)
        if let place = byStorage[storage] { return (place, parsed[place]) }
        if let place = byBytes[bytes] {
            held.append(bytes)
            byStorage[storage] = place
            return (place, parsed[place])
        }
        let result: Result<PolicyDocument, PolicyDocumentError>
        do throws(PolicyDocumentError) { result = .success(try PolicyDocument(json: bytes)) } catch { result = .failure(error) }
        parsed.append(result)
        byBytes[bytes] = parsed.count - 1
        byStorage[storage] = parsed.count - 1
        return (parsed.count - 1, result)
    }

    /// The effective policy of `layers` with the tenant record's stream limit under them: resolved
    /// once per batch for each stack of stored documents; a stack with a token's layer every time.
    mutating func effectivePolicy(_ layers: PolicyLayers, stored: StoredLayers, tenantStreamLimit: Int) -> Result<EffectivePolicy, PolicyDocumentError> {
        guard layers.entitlement == nil else { return Self.resolve(layers, tenantStreamLimit: tenantStreamLimit) }
        let key = StackKey(tenant: stored.tenant, asset: stored.asset, keyPeriod: stored.keyPeriod, tenantStreamLimit: tenantStreamLimit)
        if let known = stacks[key] { return known }
        let result = Self.resolve(layers, tenantStreamLimit: tenantStreamLimit)
        stacks[key] = result
        return result
    }

    /// Stacks the layers; a leased policy that sets no `max-streams` gets the tenant record's limit
    /// (records written before the policy engine).
    private static func resolve(_ layers: PolicyLayers, tenantStreamLimit: Int) -> Result<EffectivePolicy, PolicyDocumentError> {
        do throws(PolicyDocumentError) {
            var policy = try layers.resolve()
            if policy.leaseDurationSeconds > 0, policy.origins["max-streams"] == nil {
                policy.maxStreams = .maximum(tenantStreamLimit)
                policy.origins["max-streams"] = .tenant
            }
            return .success(policy)
        } catch {
            return .failure(error)
        }
    }
}
