import FairPlay
import Licensing
import Synchronization

/// The key-encryption keys (KEKs) a worker holds, by ID: content keys rest in the store wrapped
/// under them (AES Key Wrap, RFC 3394) and are unwrapped only in a worker's memory.
///
/// KEKs are 16 or 32 bytes. Each lives in its own heap buffer that is zeroed (`OPENSSL_cleanse`)
/// when the key is removed or replaced, or when the keyring is released; copies made for one OpenSSL
/// call are zeroed right after it. `Sendable`: the table sits behind a `Mutex`, held only to look a
/// key up or change the table, never across a cryptographic call.
public final class KeyEncryptionKeyring: Sendable {
    /// Why a key could not be wrapped or unwrapped. `description` names the KEK ID, never key bytes.
    public struct KeyringError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What went wrong, naming the KEK ID.
        public var reason: String
        /// Creates an error from a reason that must not contain key bytes.
        public init(_ reason: String) { self.reason = reason }
        public var description: String { "keyring: \(reason)" }
    }

    /// The KEKs and the content keys recently unwrapped with them (``UnwrappedKeyMemo``), under one
    /// lock: a KEK removed or replaced takes its unwrapped keys with it in the same step, so no unwrap
    /// finishing at that moment can put a key back that the keyring would no longer open.
    private struct State {
        var keys: [StoreIdentifier: SecretBytes] = [:]
        var memo = UnwrappedKeyMemo()
    }

    private let state = Mutex(State())

    /// An empty keyring.
    public init() {}

    /// A keyring holding `keys`. The caller keeps (and should cleanse) its own arrays.
    /// - Throws: when a key is not 16 or 32 bytes.
    public convenience init(_ keys: [StoreIdentifier: [UInt8]]) throws(KeyringError) {
        self.init()
        for (id, key) in keys {
            var copy = key
            try add(id: id, key: &copy)
        }
    }

    /// Adds or replaces a KEK, taking the bytes: `key` is zeroed and emptied on return. A replaced
    /// key's buffer is zeroed.
    /// - Throws: when `key` is not 16 or 32 bytes (then `key` is left as it was).
    public func add(id: StoreIdentifier, key: inout [UInt8]) throws(KeyringError) {
        guard key.count == 16 || key.count == 32 else {
            throw KeyringError("key-encryption key \(id) is \(key.count) bytes, not 16 or 32")
        }
        let secret = SecretBytes(key)
        FairPlayCrypto.cleanse(&key)
        key = []
        // The replaced SecretBytes (if any) zeroes itself when its last reference goes.
        state.withLock {
            $0.keys[id] = secret
            $0.memo.forget(keyEncryptionKeyID: id)
        }
    }

    /// Removes a KEK; its buffer is zeroed once no unwrap in flight still uses it.
    public func remove(id: StoreIdentifier) {
        state.withLock {
            _ = $0.keys.removeValue(forKey: id)
            $0.memo.forget(keyEncryptionKeyID: id)
        }
    }

    /// Removes every KEK (at shutdown).
    public func removeAll() {
        state.withLock {
            $0.keys.removeAll()
            $0.memo.removeAll()
        }
    }

    /// The IDs held, sorted.
    public var ids: [StoreIdentifier] { state.withLock { $0.keys.keys.sorted() } }

    /// Wraps a 16-byte content key under KEK `id` into what the store keeps.
    /// - Throws: unknown KEK, a key that is not 16 bytes, an IV that is not 16 bytes.
    public func wrap(contentKey: [UInt8], iv: [UInt8], with id: StoreIdentifier) throws(KeyringError) -> WrappedContentKey {
        guard contentKey.count == 16 else { throw KeyringError("content key is \(contentKey.count) bytes, not 16") }
        guard iv.count == 16 else { throw KeyringError("content IV is \(iv.count) bytes, not 16") }
        guard let kek = state.withLock({ $0.keys[id] }) else { throw KeyringError("no key-encryption key \(id)") }
        do {
            let wrapped = try kek.withBytes { bytes throws(FairPlayError) in try FairPlayCrypto.aesKeyWrap(kek: bytes, key: contentKey) }
            return WrappedContentKey(wrappedKey: wrapped, iv: iv, keyEncryptionKeyID: id)
        } catch {
            throw KeyringError("wrap under \(id) failed: \(error.reason)")
        }
    }

    /// Unwraps a stored content key with the KEK it names. The caller owns the returned 16 bytes
    /// and should `FairPlayCrypto.cleanse` them after use.
    /// - Throws: unknown KEK ID, integrity failure (wrong KEK or altered bytes), a key or IV that is
    ///   not 16 bytes.
    public func unwrap(_ wrapped: WrappedContentKey) throws(KeyringError) -> [UInt8] {
        try unwrap(wrapped, with: kek(wrapped.keyEncryptionKeyID))
    }

    private func kek(_ id: StoreIdentifier) throws(KeyringError) -> SecretBytes {
        guard let kek = state.withLock({ $0.keys[id] }) else { throw KeyringError("no key-encryption key \(id) on this worker") }
        return kek
    }

    private func unwrap(_ wrapped: WrappedContentKey, with kek: SecretBytes) throws(KeyringError) -> [UInt8] {
        let id = wrapped.keyEncryptionKeyID
        guard wrapped.iv.count == 16 else { throw KeyringError("stored content IV is \(wrapped.iv.count) bytes, not 16") }
        var key: [UInt8]
        do {
            key = try kek.withBytes { bytes throws(FairPlayError) in try FairPlayCrypto.aesKeyUnwrap(kek: bytes, wrapped: wrapped.wrappedKey) }
        } catch {
            throw KeyringError("unwrap under \(id) failed: \(error.reason)")
        }
        guard key.count == 16 else {
            FairPlayCrypto.cleanse(&key)
            throw KeyringError("unwrapped content key is \(key.count) bytes, not 16")
        }
        return key
    }

    /// ``unwrap(_:)`` for the processor: the key as shared ``SecretBytes``, taken from the memo when
    /// the same wrapped key was opened in the last ``UnwrappedKeyMemo/lifetime``.
    func contentKey(_ wrapped: WrappedContentKey, now: ContinuousClock.Instant = .now) throws(KeyringError) -> SecretBytes {
        if let known = state.withLock({ $0.memo.key(for: wrapped, now: now) }) { return known }
        let kek = try kek(wrapped.keyEncryptionKeyID)
        var key = try unwrap(wrapped, with: kek)
        let secret = SecretBytes(taking: &key)
        // Remembered only if that very KEK is still held, checked under the lock that removal and
        // replacement take: otherwise this key would outlive its KEK in the memo.
        state.withLock {
            if $0.keys[wrapped.keyEncryptionKeyID] === kek { $0.memo.remember(secret, for: wrapped, now: now) }
        }
        return secret
    }

    /// How many unwrapped content keys the memo holds (tests, diagnostics).
    var rememberedContentKeys: Int { state.withLock { $0.memo.count } }

    /// Wraps a secret of 16 to 1024 bytes, a multiple of 8 (RFC 3394), under KEK `id`: entitlement
    /// token secrets are stored this way, like content keys.
    public func wrap(secret: [UInt8], with id: StoreIdentifier) throws(KeyringError) -> [UInt8] {
        guard secret.count >= 16, secret.count <= 1024, secret.count.isMultiple(of: 8) else {
            throw KeyringError("secret is \(secret.count) bytes; RFC 3394 needs 16...1024, a multiple of 8")
        }
        guard let kek = state.withLock({ $0.keys[id] }) else { throw KeyringError("no key-encryption key \(id)") }
        do {
            return try kek.withBytes { bytes throws(FairPlayError) in try FairPlayCrypto.aesKeyWrap(kek: bytes, key: secret) }
        } catch {
            throw KeyringError("wrap under \(id) failed: \(error.reason)")
        }
    }

    /// Unwraps a secret stored with ``wrap(secret:with:)``; the caller should cleanse it after use.
    public func unwrap(secret wrapped: [UInt8], with id: StoreIdentifier) throws(KeyringError) -> [UInt8] {
        let kek = try kek(id)
        do {
            return try kek.withBytes { bytes throws(FairPlayError) in try FairPlayCrypto.aesKeyUnwrap(kek: bytes, wrapped: wrapped) }
        } catch {
            throw KeyringError("unwrap under \(id) failed: \(error.reason)")
        }
    }
}
