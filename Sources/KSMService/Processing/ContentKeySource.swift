import Licensing

/// Where a job's content key comes from, as preflight found it: the key stored for its asset ID
/// (and key period) wins; without one, the tenant's key seed derives it (docs/key-seeds.md).
enum ContentKeySource: Sendable {
    case stored(WrappedContentKey)
    /// The tenant's wrapped seed and the KEK it is wrapped under.
    case seed(wrapped: [UInt8], keyEncryptionKeyID: StoreIdentifier)
}
