/// A content key as the store holds it: wrapped, never in plaintext.
///
/// The worker wraps the 16-byte content key under the tenant's key-encryption key (AES key wrap,
/// RFC 3394, or AES-CBC) before `putContentKey`, and unwraps it after `fetch`. The store only keeps
/// and returns these bytes; it has no key and does no cryptography.
public struct WrappedContentKey: Sendable, Hashable {
    /// The wrapped key bytes (24 bytes for RFC 3394 over a 16-byte key).
    public var wrappedKey: [UInt8]
    /// The content IV (16 bytes) that the CKC returns beside the key.
    public var iv: [UInt8]
    /// The key-encryption key that wrapped `wrappedKey`, so keys survive a KEK rotation.
    public var keyEncryptionKeyID: StoreIdentifier

    /// Creates a stored key from bytes the caller already wrapped; the store checks no length.
    public init(wrappedKey: [UInt8], iv: [UInt8], keyEncryptionKeyID: StoreIdentifier) {
        self.wrappedKey = wrappedKey
        self.iv = iv
        self.keyEncryptionKeyID = keyEncryptionKeyID
    }
}
